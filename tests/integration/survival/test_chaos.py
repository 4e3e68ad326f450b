"""Chaos: 100 jobs submitted while the Celery worker is killed -9 at random moments and the
emulator answers UNAVAILABLE to 20% of calls. Exactly 100 CustomJobs, none twice, all ended."""

from __future__ import annotations

import random
import signal
import threading
import time

import pytest

from tests.integration.conftest import Api
from tests.integration.survival.stackutil import (
    TERMINAL,
    admin,
    custom_jobs_by_job,
    jobs_named,
    wait,
)
from tests.runs.conftest import SurvivalStack, sleeping_job

pytestmark = pytest.mark.integration

JOBS = 100


class WorkerKiller(threading.Thread):
    """Kills the worker with SIGKILL at random moments and starts a new one, until stopped."""

    def __init__(self, stack: SurvivalStack, seed: int) -> None:
        super().__init__(name="worker-killer", daemon=True)
        self.stack = stack
        self.random = random.Random(seed)
        self.stopping = threading.Event()
        self.kills = 0

    def run(self) -> None:
        while not self.stopping.wait(self.random.uniform(1.0, 4.0)):
            self.stack.stop_process("worker", sig=signal.SIGKILL)
            self.kills += 1
            # Dead for a moment, as a crashed container is before its restart.
            self.stopping.wait(self.random.uniform(0.2, 1.5))
            self.stack.start_process("worker")

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)
        if "worker" not in self.stack.procs or self.stack.procs["worker"].poll() is not None:
            self.stack.start_process("worker")


def test_exactly_once_under_worker_kills_and_api_faults(survival_stack: SurvivalStack,
                                                        survival_api: Api) -> None:
    stack, api = survival_stack, survival_api
    seed = random.randrange(1 << 30)
    killer = WorkerKiller(stack, seed)
    with admin(stack) as client:
        client.set_faults("*", "UNAVAILABLE", 0.2)
        try:
            killer.start()
            ids = []
            for n in range(JOBS):
                response = api.post("/api/v1/jobs/", sleeping_job(f"chaos-{n:03d}", 1))
                assert response.status_code == 201, response.text
                ids.append(response.json()["id"])
            # Keep killing while the submissions and the first reconciles are in flight: at
            # least 6 s and at least 3 kills, however fast the submissions went.
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline or killer.kills < 3:
                assert killer.is_alive(), "the worker killer stopped"
                time.sleep(0.2)
            killer.stop()

            def all_ended() -> list[dict] | None:
                jobs = jobs_named(api, "chaos-")
                return jobs if all(j["state"] in TERMINAL for j in jobs) else None

            jobs = wait(all_ended, timeout_s=240, what="every chaos job to end", stack=stack,
                        interval_s=2)
        finally:
            killer.stop()
            client.set_faults("*", "UNAVAILABLE", 0)

    assert killer.kills >= 3, f"the worker was killed {killer.kills} times (seed {seed})"
    assert sorted(j["id"] for j in jobs) == sorted(ids)
    assert {j["state"] for j in jobs} == {"SUCCEEDED"}, (seed, [
        (j["id"], j["state"]) for j in jobs if j["state"] != "SUCCEEDED"])
    created = custom_jobs_by_job(stack, ids)
    twice = {job_id: [c.name for c in found] for job_id, found in created.items()
             if len(found) != 1}
    assert twice == {}, f"created more than once (seed {seed}): {twice}"
    assert sorted(created) == sorted(ids), "every job has its CustomJob"
    assert sum(len(found) for found in created.values()) == JOBS
    for job_id, [custom_job] in created.items():
        assert custom_job.display_name == f"cp-{job_id}-a1"
        assert custom_job.state.name == "JOB_STATE_SUCCEEDED"
