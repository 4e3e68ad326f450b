"""A job on the emulator cannot read the control plane's database file, the emulator's state
or the environment of the processes around it: it runs as the sandbox's own user, with an
environment of its own. The job itself tries, and its output shows permission denied."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from localvertex import sandbox
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

ROOT = Path(__file__).resolve().parents[2]
State = aiplatform_v1.JobState
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox user needs root to switch to")

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


def test_a_job_cannot_read_the_control_planes_data(host: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    database = host / "controlplane.sqlite3"
    assert database.stat().st_mode & 0o077 == 0
    data_dir = host / "localvertex"
    emulator = EmulatorProcess(data_dir, [*FAST_FLAGS, "--replica-user", sandbox.DEFAULT_USER])
    # The emulator runs with the control plane's settings in its environment, as in devstack.
    monkeypatch.setenv("SECRET_KEY", "not-for-jobs")
    monkeypatch.setenv("DATABASE_URL", os.environ.get("DATABASE_URL", "postgres://x@h/db"))
    emulator.start()
    try:
        # /usr/bin/python3, not this test's interpreter: that one may live in a private folder.
        pool = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
                "container_spec": {"image_uri": "img", "command": [
                    "/usr/bin/python3", "-c", TRY_EVERYTHING, str(database),
                    str(data_dir / "localvertex.sqlite3")]}}
        created = emulator.jobs.create_custom_job(parent=PARENT,
                                                  custom_job=custom_job("probe", [pool]))
        job = wait_state(emulator.jobs, created.name,
                         {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED})
        logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
        reports = [p["report"] for p in json_entries(logs) if "report" in p]
        assert reports, f"no report; emulator said:\n{emulator.output()[-3000:]}\n" + \
            json.dumps([str(e)[:300] for e in logs])
    finally:
        emulator.stop()
    report = reports[0]
    assert report["uid"] != 0
    for what in ("database", "emulator_state", "emulator_environ"):
        assert report[what].startswith("PermissionError"), (what, report)
    assert report["leaked"] == []


def test_output_folders_the_emulator_makes_belong_to_the_replica_user(tmp_path: Path) -> None:
    """A job's checkpoint folder in a stand-in bucket, made before its replicas start: the
    replica user owns it and the parents made with it (so a trainer can write checkpoints),
    and nothing that was there before changes hands."""
    who = sandbox.identity(sandbox.DEFAULT_USER)
    assert who is not None
    bucket = tmp_path / "gcs" / "bucket"
    bucket.mkdir(parents=True)
    folder = bucket / "jobs" / "team" / "job-1" / "checkpoints"
    sandbox.replica_folder(folder, who)
    for made in (folder, folder.parent, bucket / "jobs"):
        assert (made.stat().st_uid, made.stat().st_gid) == (who.uid, who.gid), made
    assert bucket.stat().st_uid == os.geteuid()
    sandbox.replica_folder(folder, who)  # again: nothing to make
    sandbox.replica_folder(tmp_path / "mine", None)  # no sandbox: made as the emulator's own
    assert (tmp_path / "mine").stat().st_uid == os.geteuid()
