"""Redis restarted, and the emulator restarted, in the middle of running jobs: every job still
ends in the state the backend says."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from config.devstack import wait_for_port
from config.ports import reserve_port
from tests.integration.survival.stackutil import (
    TERMINAL,
    VERTEX_TERMINAL,
    custom_jobs_by_job,
    jobs_named,
    wait,
)
from tests.stacks import Api, SurvivalStack, new_stack, running, sleeping_job

pytestmark = pytest.mark.integration


def _agrees_with_the_backend(stack: SurvivalStack, jobs: list[dict]) -> None:
    created = custom_jobs_by_job(stack, [j["id"] for j in jobs])
    for job in jobs:
        [custom_job] = created[job["id"]]
        assert VERTEX_TERMINAL[custom_job.state.name] == job["state"], (job, custom_job.state)


def test_jobs_converge_after_an_emulator_restart(survival_stack: SurvivalStack,
                                                 survival_api: Api) -> None:
    stack, api = survival_stack, survival_api
    for n in range(4):
        response = api.post("/api/v1/jobs/", sleeping_job(f"emu-restart-{n}", 5))
        assert response.status_code == 201, response.text
    wait(lambda: all(j["state"] == "RUNNING" for j in jobs_named(api, "emu-restart-")),
         timeout_s=60, what="the jobs to run", stack=stack)

    stack.stop_process("emulator")
    time.sleep(2)  # the control plane meets UNAVAILABLE for a few sweeps
    wait_for_port(stack.config.emulator_port, 60, stack.start_process("emulator"))

    jobs = wait(lambda: (lambda js: js if all(j["state"] in TERMINAL for j in js) else None)(
        jobs_named(api, "emu-restart-")), timeout_s=120, what="the jobs to end", stack=stack)
    assert {j["state"] for j in jobs} == {"SUCCEEDED"}
    _agrees_with_the_backend(stack, jobs)
    # The emulator's restart is recorded, from its "Restarting replica" line.
    job_id = jobs[0]["id"]
    try:
        # The follower may still be catching up with a busy stack's logs.
        restarts = wait(lambda: api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"],
                        timeout_s=90, what="the restart record", stack=stack)
    except AssertionError as exc:
        events = api.get(f"/api/v1/jobs/{job_id}/events/", limit=500)["results"]
        lines = api.get(f"/api/v1/jobs/{job_id}/logs/", limit=500)["results"]
        raise AssertionError(f"{exc}\nevents: {[(e['kind'], e['replica']) for e in events]}"
                             f"\nlines: {[ln['message'] for ln in lines]}") from exc
    assert [r["cause"] for r in restarts] == ["backend"]


class Supervisor(threading.Thread):
    """Restarts the worker when it exits, as a container's restart policy does.

    A broker that goes away while a late-acknowledged task finishes can stop the Celery worker
    (kombu raises AttributeError acking on the closed channel, which Celery treats as
    unrecoverable); deployments run the worker under a supervisor for that reason.
    """

    def __init__(self, stack: SurvivalStack) -> None:
        super().__init__(name="supervisor", daemon=True)
        self.stack = stack
        self.stopping = threading.Event()
        self.restarts = 0

    def run(self) -> None:
        while not self.stopping.wait(0.5):
            proc = self.stack.procs.get("worker")
            if proc is not None and proc.poll() is not None:
                self.stack.procs.pop("worker", None)
                self.stack.start_process("worker")
                self.restarts += 1

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=10)


class PrivateRedis:
    """A redis-server of the test's own, so restarting it disturbs no one else."""

    def __init__(self, directory: Path) -> None:
        self.port = reserve_port()
        self.directory = directory
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, 20, self.proc)
        deadline = time.monotonic() + 20
        while not self._pings() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _pings(self) -> bool:
        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # as a crash: nothing saved, every queued message lost
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        from tests.conftest import require

        require(False, "redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def test_jobs_converge_after_a_redis_restart(postgres_url: str, private_redis: PrivateRedis,
                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    stack, database = new_stack(postgres_url, private_redis.url, tmp_path_factory, {})
    with running(stack, postgres_url, database):
        seeded = json.loads(stack.manage("seed_demo", "--username", "rita", "--team", "rl",
                                         capture=True))
        api = Api(stack.web_url, seeded["token"])
        for n in range(4):
            response = api.post("/api/v1/jobs/", sleeping_job(f"redis-restart-{n}", 5))
            assert response.status_code == 201, response.text
        wait(lambda: all(j["state"] == "RUNNING" for j in jobs_named(api, "redis-restart-")),
             timeout_s=60, what="the jobs to run", stack=stack)

        supervisor = Supervisor(stack)
        supervisor.start()
        try:
            private_redis.stop()
            # Submitted while the broker is down: its message cannot even be sent.
            response = api.post("/api/v1/jobs/", sleeping_job("redis-restart-down", 1))
            assert response.status_code == 201, response.text
            private_redis.start()

            jobs = wait(lambda: (lambda js: js if len(js) == 5 and all(
                j["state"] in TERMINAL for j in js) else None)(
                    jobs_named(api, "redis-restart-")),
                timeout_s=150, what="the jobs to end after the Redis restart", stack=stack)
        finally:
            supervisor.stop()
        assert {j["state"] for j in jobs} == {"SUCCEEDED"}
        _agrees_with_the_backend(stack, jobs)

