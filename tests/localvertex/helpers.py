"""Running the emulator as a real subprocess, and small helpers for talking to it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from google.cloud import aiplatform_v1
from google.cloud.logging_v2.types import LogEntry
from google.protobuf import json_format

from config.devstack import ProcessGuard
from config.ports import reserve_port
from localvertex import auth
from localvertex.admin.client import AdminClient
from localvertex.client import job_client, logging_client, wait_ready
from localvertex.replicas.processes import kill_strays

REPO = Path(__file__).resolve().parents[2]
PROJECT = "test-project"
PARENT = f"projects/{PROJECT}/locations/us-central1"
TERMINAL = {
    aiplatform_v1.JobState.JOB_STATE_SUCCEEDED,
    aiplatform_v1.JobState.JOB_STATE_FAILED,
    aiplatform_v1.JobState.JOB_STATE_CANCELLED,
}
# Fast settings: the state delays stay long enough to observe each state; no request quota
# (tests poll a job's state as fast as they like; test_request_quota.py sets one).
FAST_FLAGS = [
    "--queue-delay", "0.3",
    "--pending-delay", "0.3",
    "--max-restarts", "2",
    "--cancel-grace", "2",
    "--preempt-grace", "2",
    "--crud-quota-per-minute", "0",
]  # fmt: skip


class EmulatorProcess:
    """`python -m localvertex` on a free port (its admin service on another) with its own data
    dir, where it keeps the token its callers need (auth_token)."""

    def __init__(self, data_dir: Path, flags: list[str]) -> None:
        self.data_dir = data_dir
        self.flags = flags
        self.port = reserve_port()
        self.admin_port = reserve_port()
        self.storage_port = reserve_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir.parent / f"{data_dir.name}-emulator.log"
        # Stops the emulator (and so its replicas) if the test process dies without stop().
        self.guard = ProcessGuard(data_dir.parent / f"{data_dir.name}-emulator.group")
        self.jobs: aiplatform_v1.JobServiceClient
        self.logs = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def admin_address(self) -> str:
        return f"127.0.0.1:{self.admin_port}"

    @property
    def storage_host(self) -> str:
        """Its Cloud Storage (localvertex/storage/), as STORAGE_EMULATOR_HOST names it."""
        return f"http://127.0.0.1:{self.storage_port}"

    @property
    def token(self) -> str:
        """What the control plane holds: every call without it is refused."""
        return auth.read(self.data_dir / auth.TOKEN_FILE)

    def channel(self) -> grpc.Channel:
        """A channel to the emulator whose calls carry its token, for Google's clients."""
        return auth.channel(self.address, self.token)

    def admin(self) -> AdminClient:
        return AdminClient(self.admin_address, self.token)

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable, "-m", "localvertex",
                    "--port", str(self.port),
                    "--admin-port", str(self.admin_port),
                    "--storage-port", str(self.storage_port),
                    "--data-dir", str(self.data_dir),
                    *self.flags,
                ],
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.guard.watch([self.proc])
        try:
            wait_ready(self.address, timeout=30)
        except grpc.FutureTimeoutError:
            self.stop()
            raise RuntimeError(f"emulator did not start:\n{self.output()}") from None
        self.jobs = job_client(self.address, self.token)
        self.logs = logging_client(self.address, self.token)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit; kill any replica it left. Its exit code."""
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    rc = self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
            else:
                rc = self.proc.returncode
            self.proc = None
        self.guard.close()
        for client in (getattr(self, "jobs", None), self.logs):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.transport.close()
        kill_strays(self.data_dir)
        return rc

    def restart(self) -> None:
        self.stop()
        self.start()


# -- helpers used by the tests ------------------------------------------------------------


def python_pool(code: str, replicas: int = 1, env: dict[str, str] | None = None) -> dict:
    """A worker pool whose replicas run `python -c code`."""
    return {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": replicas,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/test/trainer:latest",
            "command": ["python", "-c", code],
            "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        },
    }


def custom_job(display_name: str, pools: list[dict], **spec: object) -> aiplatform_v1.CustomJob:
    return aiplatform_v1.CustomJob(
        display_name=display_name,
        labels=spec.pop("labels", {}),
        job_spec=aiplatform_v1.CustomJobSpec(worker_pool_specs=pools, **spec),
    )


def job_id(job: aiplatform_v1.CustomJob) -> str:
    return job.name.rsplit("/", 1)[1]


def wait_for(predicate: Callable[[], object], timeout: float = 60.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        time.sleep(interval)


def wait_state(
    jobs: aiplatform_v1.JobServiceClient, name: str, states, timeout: float = 60.0
) -> aiplatform_v1.CustomJob:
    states = {states} if isinstance(states, int) else set(states)
    found: list[aiplatform_v1.CustomJob] = []

    def reached() -> bool:
        job = jobs.get_custom_job(name=name)
        found[:] = [job]
        return job.state in states

    wait_for(reached, timeout)
    return found[0]


def watch_states(jobs: aiplatform_v1.JobServiceClient, name: str, timeout: float = 60.0):
    """Every distinct state seen until the job ends, and the final job."""
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = jobs.get_custom_job(name=name)
        if not seen or seen[-1] != job.state:
            seen.append(job.state)
        if job.state in TERMINAL:
            return seen, job
        time.sleep(0.03)
    raise AssertionError(f"job {name} did not end in {timeout}s; states seen {seen}")


def entries(logs, filter_: str, **request: object) -> list:
    return list(
        logs.list_log_entries(
            request={"resource_names": [f"projects/{PROJECT}"], "filter": filter_, **request}
        )
    )


def json_entries(items) -> list[dict]:
    """The jsonPayloads of the entries that have one, as plain dicts."""
    return [
        json_format.MessageToDict(LogEntry.pb(e).json_payload)
        for e in items
        if LogEntry.pb(e).HasField("json_payload")
    ]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet collected) counts as dead.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return False
    return True
