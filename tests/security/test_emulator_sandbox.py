"""A job on the emulator cannot read the control plane's database file, the emulator's state
or the environment of the processes around it: it runs as the sandbox's own user, with an
environment of its own, also when the emulator's Python lives in a private home folder (the
user is let through, not allowed to list, the folders above it). The job itself tries, and
its output shows permission denied; a sandbox that cannot be had stops the emulator."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

import localvertex.replicas.sandbox as sandbox
import localvertex.replicas.traverse as traverse
from tests.conftest import require
from tests.localvertex.helpers import (
    FAST_FLAGS,
    PARENT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    wait_state,
)

# Left out of `make test-fast` (the inner loop): replicas run as a sandbox user.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
State = aiplatform_v1.JobState


@pytest.fixture(autouse=True)
def _root() -> None:
    """The sandbox switches each replica to a user of its own, which only root can do: with
    CI=true a run without root fails here instead of passing these tests by skipping them."""
    require(os.geteuid() == 0, "a sandbox user needs root to switch to")


TRY_EVERYTHING = textwrap.dedent(
    """
    import json, os, sys
    def attempt(what, path):
        try:
            with open(path, "rb") as f:
                f.read(64)
            return "read"
        except OSError as exc:
            return type(exc).__name__ + ": " + exc.strerror
    report = {
        "uid": os.getuid(),
        "database": attempt("db", sys.argv[1]),
        "emulator_state": attempt("state", sys.argv[2]),
        "emulator_environ": attempt("environ", "/proc/%d/environ" % os.getppid()),
        "leaked": sorted(k for k in ("DATABASE_URL", "SECRET_KEY", "REDIS_URL",
                                     "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
                         if k in os.environ),
    }
    print(json.dumps({"severity": "NOTICE", "message": "probe", "report": report}))
    """
)


@pytest.fixture
def host() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="cp-sandbox-"))
    var = base / "var"
    var.mkdir()
    # The control plane's own database, as the app leaves it (settings make it private).
    database = var / "controlplane.sqlite3"
    sqlite3.connect(database).execute("create table secrets (value text)").connection.close()
    subprocess.run([sys.executable, "-c", "import config.settings"], cwd=ROOT, check=True,
                   env={**os.environ, "DATABASE_URL": f"sqlite:///{database}",
                        "CP_VAR_DIR": str(var), "DEBUG": "true"}, timeout=60)
    yield var
    subprocess.run(["rm", "-rf", str(base)], check=False)


def _probe(emulator: EmulatorProcess, python: str, database: Path, state: Path) -> dict:
    """Run the probe as a job's one replica; what it found."""
    pool = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
            "container_spec": {"image_uri": "img", "command": [
                python, "-c", TRY_EVERYTHING, str(database), str(state)]}}
    created = emulator.jobs.create_custom_job(parent=PARENT,
                                              custom_job=custom_job("probe", [pool]))
    job = wait_state(emulator.jobs, created.name,
                     {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED})
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    reports = [p["report"] for p in json_entries(logs) if "report" in p]
    assert reports, f"no report; emulator said:\n{emulator.output()[-3000:]}\n" + \
        json.dumps([str(e)[:300] for e in logs])
    return reports[0]


# The default way (no replica user named, `python` as a job's command: the emulator's own
# interpreter, wherever it is installed, a private home folder included), and a user named
# with a system Python.
@pytest.mark.parametrize("flags, python", [
    ([], "python"),
    (["--replica-user", sandbox.DEFAULT_USER], "/usr/bin/python3"),
], ids=["default", "named-user"])
def test_a_job_cannot_read_the_control_planes_data(host: Path, monkeypatch: pytest.MonkeyPatch,
                                                    flags: list[str], python: str) -> None:
    database = host / "controlplane.sqlite3"
    assert database.stat().st_mode & 0o077 == 0
    data_dir = host / "localvertex"
    emulator = EmulatorProcess(data_dir, [*FAST_FLAGS, *flags])
    # The emulator runs with the control plane's settings in its environment, as in devstack.
    monkeypatch.delenv(sandbox.ENV_USER, raising=False)
    monkeypatch.setenv("SECRET_KEY", "not-for-jobs")
    monkeypatch.setenv("DATABASE_URL", os.environ.get("DATABASE_URL", "postgres://x@h/db"))
    emulator.start()
    try:
        report = _probe(emulator, python, database, data_dir / "localvertex.sqlite3")
    finally:
        emulator.stop()
    assert f"sandbox: replicas run as user {sandbox.DEFAULT_USER}" in emulator.output()
    assert report["uid"] != 0
    for what in ("database", "emulator_state", "emulator_environ"):
        assert report[what].startswith("PermissionError"), (what, report)
    assert report["leaked"] == []


def test_a_replica_user_that_cannot_be_used_stops_the_emulator_instead_of_running_as_root(
        tmp_path: Path) -> None:
    """root is never a sandbox: asked for, the emulator refuses to start and says how to run
    replicas as root knowingly."""
    done = subprocess.run([sys.executable, "-m", "localvertex", "--port", "0", "--data-dir",
                           str(tmp_path / "lv"), "--replica-user", "root"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "sandbox: refusing to start" in done.stderr
    assert "--replica-user ''" in done.stderr


def test_passage_through_a_private_folder_is_granted_without_listing(tmp_path: Path) -> None:
    """What the sandbox grants above a private interpreter: pass through, never list."""
    who = sandbox.identity(sandbox.DEFAULT_USER)
    assert who is not None
    private = tmp_path / "home"
    (private / "bin").mkdir(parents=True)
    tool = private / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho ran\n")
    tool.chmod(0o755)
    private.chmod(0o700)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), user=who.uid, group=who.gid, extra_groups=[],
                              capture_output=True, text=True, timeout=30)

    with pytest.raises(PermissionError):
        run(str(tool))
    # pytest's own folders above (private too) may be granted first; the home is the last.
    granted = traverse.let_through(who.uid, who.gid, [tool])
    assert granted[-1] == private and (private / "bin") not in granted
    assert run(str(tool)).stdout == "ran\n"
    assert run("ls", str(private)).returncode != 0  # passage only: no listing
    assert private.stat().st_mode & 0o007 == 0  # everyone else is still kept out
    assert traverse.let_through(who.uid, who.gid, [tool]) == []  # once is enough


def test_a_model_server_is_sandboxed_as_a_jobs_replica_is(host: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A deployed model's container runs a team's code too: the same probe, run as its
    server, finds nothing to read (its output comes back in the failed deployment's error)."""
    from google.cloud.aiplatform_v1.services.endpoint_service.transports import (
        EndpointServiceGrpcTransport,
    )
    from google.cloud.aiplatform_v1.services.model_service.transports import (
        ModelServiceGrpcTransport,
    )

    database = host / "controlplane.sqlite3"
    data_dir = host / "localvertex"
    monkeypatch.delenv(sandbox.ENV_USER, raising=False)
    monkeypatch.setenv("SECRET_KEY", "not-for-jobs")
    emulator = EmulatorProcess(data_dir, FAST_FLAGS)
    emulator.start()
    channel = emulator.channel()
    try:
        models = aiplatform_v1.ModelServiceClient(
            transport=ModelServiceGrpcTransport(channel=channel))
        endpoints = aiplatform_v1.EndpointServiceClient(
            transport=EndpointServiceGrpcTransport(channel=channel))
        model = models.upload_model(request={"parent": PARENT, "model_id": "probe", "model": {
            "display_name": "probe", "container_spec": {
                "image_uri": "us-docker.pkg.dev/p/serve:1",
                "command": ["python", "-c", TRY_EVERYTHING + "\nraise SystemExit(1)\n",
                            str(database), str(data_dir / "localvertex.sqlite3")]}}}
        ).result().model
        endpoint = endpoints.create_endpoint(request={
            "parent": PARENT, "endpoint_id": "probe", "endpoint": {"display_name": "p"}}
        ).result()
        operation = endpoints.deploy_model(endpoint=endpoint.name, deployed_model={
            "id": "1", "model": model, "dedicated_resources": {
                "machine_spec": {"machine_type": "n1-standard-2"}, "min_replica_count": 1}},
            traffic_split={"0": 100}).operation
        message = _finished(endpoints, operation.name).error.message
    finally:
        channel.close()
        emulator.stop()
    lines = [line for line in message.splitlines() if '"report"' in line]
    assert lines, message
    report = json.loads(lines[-1])["report"]
    assert report["uid"] != 0
    for what in ("database", "emulator_state", "emulator_environ"):
        assert report[what].startswith("PermissionError"), (what, report)
    assert report["leaked"] == []


def _finished(endpoints, name: str, timeout_s: float = 120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        operation = endpoints.get_operation(request={"name": name})
        if operation.done:
            return operation
        time.sleep(0.3)
    raise AssertionError(f"{name} did not finish")
