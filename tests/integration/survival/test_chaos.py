"""Chaos: 100 jobs submitted while the Celery worker is killed -9 at random moments and the
emulator answers UNAVAILABLE to 20% of calls. Exactly 100 CustomJobs, none twice, all ended.

It runs on a stack of its own: the killed workers leave messages unacknowledged (redelivered
after the broker's visibility timeout) and leases held until they expire, which the tests that
come after it must not inherit."""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from tests.integration.survival.stackutil import (
    TERMINAL,
    admin,
    custom_jobs_by_job,
    jobs_named,
    wait,
)
from tests.stacks import Api, SurvivalStack, new_stack, running, sleeping_job

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


@pytest.fixture(scope="module")
def chaos_stack(postgres_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[SurvivalStack]:
    stack, name = new_stack(postgres_url, redis_url, tmp_path_factory, {})
    with running(stack, postgres_url, name):
        yield stack


@pytest.fixture(scope="module")
def chaos_api(chaos_stack: SurvivalStack) -> Api:
    seeded = json.loads(chaos_stack.manage("seed_demo", "--username", "sam", "--team", "speech",
                                           capture=True))
    return Api(chaos_stack.web_url, seeded["token"])


def test_exactly_once_under_worker_kills_and_api_faults(chaos_stack: SurvivalStack,
                                                        chaos_api: Api) -> None:
    stack, api = chaos_stack, chaos_api
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

            # A bound for a hang, not a speed: alone the jobs end within a minute, but under a
            # full suite on two cores the submissions, each slowed by the faults, take minutes.
            jobs = wait(all_ended, timeout_s=480, what="every chaos job to end", stack=stack,
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
