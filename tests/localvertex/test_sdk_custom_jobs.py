"""`CustomJob.from_local_script` against the emulator, driven only through
`google.cloud.aiplatform` (tests/localvertex/sdk.py): the SDK packages the script and stages it
to the staging bucket through Google's storage client (the emulator's Cloud Storage,
localvertex/storage/), the job runs the staged package, and the script's own gs:// write to
its base output directory (through its replica's STORAGE_EMULATOR_HOST) is read back."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from google.cloud import aiplatform, storage
from google.cloud.aiplatform_v1 import JobState

from tests.localvertex.helpers import EmulatorProcess
from tests.localvertex.sdk import STAGING_BUCKET, sdk_channel

# A prebuilt training container: the SDK then runs the staged package as a pythonPackageSpec
# (with another image it pip-installs it from /gcs/ first, which needs PyPI).
PREBUILT = "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest"

SCRIPT = textwrap.dedent("""
    import json, os, sys
    from google.cloud import storage
    base = json.loads(os.environ["CLUSTER_SPEC"])["job"]["base_output_directory"]
    bucket, _, key = base["output_uri_prefix"][len("gs://"):].partition("/")
    blob = storage.Client().bucket(bucket).blob(key.rstrip("/") + "/model/weights.txt")
    blob.upload_from_string(" ".join(sys.argv[1:]))
    print(json.dumps({"wrote": f"gs://{bucket}/{blob.name}"}))
""")


def test_from_local_script_stages_runs_and_writes_through_cloud_storage(
        monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess, tmp_path: Path) -> None:
    script = tmp_path / "task.py"
    script.write_text(SCRIPT)
    with sdk_channel(monkeypatch, emulator):
        job = aiplatform.CustomJob.from_local_script(
            display_name="sdk-local-script", script_path=str(script),
            container_uri=PREBUILT, args=["--epochs", "2"],
            replica_count=1, machine_type="n1-standard-4")
        package = job.job_spec.worker_pool_specs[0].python_package_spec.package_uris[0]
        assert package.startswith(f"{STAGING_BUCKET}/")
        job.run()
        assert job.state == JobState.JOB_STATE_SUCCEEDED
        client = storage.Client()
        bucket = STAGING_BUCKET[len("gs://"):]
        # Staged by the SDK through Google's client, and kept as the emulator's folder.
        staged = client.bucket(bucket).get_blob(package[len(STAGING_BUCKET) + 1:])
        assert staged is not None and staged.size > 0
        base = job.job_spec.base_output_directory.output_uri_prefix.rstrip("/")
        written = client.bucket(bucket).blob(f"{base[len(STAGING_BUCKET) + 1:]}/model/weights.txt")
        assert written.download_as_bytes() == b"--epochs 2"
        assert (emulator.data_dir / "gcs" / bucket / written.name).read_bytes() == b"--epochs 2"
