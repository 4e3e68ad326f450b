"""A team's Cloud Storage is its own in the local stack (issue 35 item 3, issue 40): the
trainer of team A's job writes its checkpoints to gs:// through Google's storage client (its
replica's STORAGE_EMULATOR_HOST, the door of its job's namespace: localvertex/storage/), the
control plane's side reads them back through the same client, and a replica of team B, which
reaches the same service through its own job's door, is refused team A's objects with Cloud
Storage's 403 while it reads and writes its own."""

from __future__ import annotations

import json
import os
import textwrap
import uuid

from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1, storage

from localvertex.replicas import job_network
from tests.conftest import require
from tests.localvertex.helpers import (
    PARENT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    python_pool,
    wait_state,
)

DONE = {aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, aiplatform_v1.JobState.JOB_STATE_FAILED}

# Team B's replica: every way at team A's checkpoint through the client, then its own folder.
INTRUDER = textwrap.dedent("""
    import json, os, sys
    from google.cloud import storage
    theirs, mine = sys.argv[1], sys.argv[2]
    client = storage.Client()
    bucket_name, _, key = theirs[len("gs://"):].partition("/")
    bucket = client.bucket(bucket_name)
    attempts = {
        "read": lambda: bucket.blob(key + "/COMMITTED").download_as_bytes(),
        "list": lambda: list(client.list_blobs(bucket_name, prefix=key + "/")),
        "write": lambda: bucket.blob(key + "/planted").upload_from_string(b"b's"),
        "delete": lambda: bucket.blob(key + "/COMMITTED").delete(),
    }
    for what, attempt in attempts.items():
        try:
            attempt()
            said = "ALLOWED"
        except Exception as exc:
            said = f"{type(exc).__name__}: {exc}"
        print(json.dumps({"attempt": what, "said": said}), flush=True)
    own_bucket, _, own_key = mine[len("gs://"):].partition("/")
    client.bucket(own_bucket).blob(own_key + "/note").upload_from_string(b"team b's own")
    print(json.dumps({"attempt": "own", "said": os.environ["STORAGE_EMULATOR_HOST"]}))
""")


def trainer_pool(checkpoints: str) -> dict:
    pool = python_pool("")
    pool["container_spec"]["command"] = [
        "python", "-m", "trainers.train", "--preset", "tiny", "--steps", "4",
        "--checkpoint-every", "2", "--eval-every", "0", "--checkpoint-dir", checkpoints]
    return pool


def test_a_teams_checkpoint_is_read_back_and_walled_from_another_team(
        emulator: EmulatorProcess) -> None:
    require(os.geteuid() == 0 and job_network.why_unavailable() is None,
            "team users and network namespaces need root, ip and nsenter (CI runs as root)")
    run = uuid.uuid4().hex[:8]
    bucket = f"walls-{run}"
    base_a, base_b = f"gs://{bucket}/jobs/vision/{run}", f"gs://{bucket}/jobs/speech/{run}"
    checkpoints = f"{base_a}/checkpoints"
    trained = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "walls-a", [trainer_pool(checkpoints)], labels={"cp-team": "vision"},
        base_output_directory={"output_uri_prefix": base_a}))
    done = wait_state(emulator.jobs, trained.name, DONE, timeout=120)
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, done.error

    # Read back through Google's client, as the control plane's side does (the host's port).
    client = storage.Client(project="p", credentials=AnonymousCredentials(),
                            client_options={"api_endpoint": emulator.storage_host})
    listed = client.list_blobs(bucket, prefix=f"jobs/vision/{run}/checkpoints/", delimiter="/")
    assert list(listed) == []  # (the listing's prefixes are read once its pages are)
    steps = sorted(listed.prefixes)
    assert steps == [f"jobs/vision/{run}/checkpoints/step-00000002/",
                     f"jobs/vision/{run}/checkpoints/step-00000004/"], steps
    newest = f"jobs/vision/{run}/checkpoints/step-00000004"
    marker = json.loads(client.bucket(bucket).blob(f"{newest}/COMMITTED").download_as_bytes())
    assert marker["step"] == 4
    # Written by the service into team A's folder as team A's own files.
    folder = emulator.data_dir / "gcs" / bucket / "jobs/vision" / run / "checkpoints"
    assert os.stat(folder / "step-00000004" / "COMMITTED").st_uid == os.stat(
        emulator.data_dir / "gcs" / bucket / "jobs/vision" / run).st_uid != 0

    pool = python_pool(INTRUDER)
    pool["container_spec"]["args"] = [f"gs://{bucket}/{newest}", base_b]
    intruder = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "walls-b", [pool], labels={"cp-team": "speech"},
        base_output_directory={"output_uri_prefix": base_b}))
    done = wait_state(emulator.jobs, intruder.name, DONE, timeout=60)
    lines = json_entries(entries(emulator.logs, f'resource.labels.job_id="{job_id(intruder)}"'))
    said = {line["attempt"]: line["said"] for line in lines if "attempt" in line}
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, (done.error, said)
    for attempt in ("read", "list", "write", "delete"):
        assert said[attempt].startswith("Forbidden: 403"), (attempt, said[attempt])
        assert "team 'speech'" in said[attempt], said[attempt]
    # Its own folder it writes, through the same door (the host's port number, in its
    # namespace); team A's checkpoint is untouched.
    assert said["own"] == emulator.storage_host
    assert client.bucket(bucket).blob(f"jobs/speech/{run}/note").download_as_bytes() == \
        b"team b's own"
    assert client.bucket(bucket).blob(f"{newest}/COMMITTED").exists()
    assert not client.bucket(bucket).blob(f"{newest}/planted").exists()
