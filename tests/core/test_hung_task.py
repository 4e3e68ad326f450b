"""A hung task on a real worker and a real Redis broker: it is stopped at its soft limit, killed
at its hard limit, and never delivered a second time, because its limit ends it before the
broker's visibility timeout would hand its unacknowledged message to a worker again.

The worker is the project's Celery app (tests/core/limits_worker.py) started the way
config/devstack.py starts one, with short limits (hard 3 s, soft 2.4 s) and the shortest
visibility timeout the settings accept (10 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery
from kombu import Connection

from config.devstack import ROOT, Stack, StackConfig

# Left out of `make test-fast` (the inner loop): a Celery worker left to hit its time limits.
pytestmark = pytest.mark.slow

VISIBILITY_S = 10
HARD_LIMIT_S = 3


def wait_until(what: str, condition: Callable[[], Any], timeout_s: float,
               worker_log: Path) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            log = worker_log.read_text(errors="replace")[-4000:] if worker_log.exists() else ""
            raise AssertionError(f"timed out waiting for {what}\n--- worker ---\n{log}")
        time.sleep(0.05)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Broker:
    """The worker's broker as the test sees it: the same Redis, the same key prefix."""

    def __init__(self, url: str, prefix: str, queue: str) -> None:
        self.url, self.prefix, self.queue = url, prefix, queue
        self.options = {"global_keyprefix": prefix, "visibility_timeout": VISIBILITY_S}
        self.redis = redis.Redis.from_url(url)
        self.app = Celery("test-sender", broker=url)
        self.app.conf.broker_transport_options = self.options

    def send(self, name: str, token: str) -> None:
        self.app.send_task(f"tests.core.hung_tasks.{name}", args=[token], queue=self.queue)

    def records(self, token: str) -> list[str]:
        return [r.decode() for r in self.redis.lrange(f"{self.prefix}record:{token}", 0, -1)]

    def clear(self) -> None:
        for key in self.redis.scan_iter(f"{self.prefix}*"):
            self.redis.delete(key)


@pytest.fixture
def worker(redis_url: str, tmp_path: Path) -> Iterator[tuple[Broker, Stack]]:
    prefix = f"cp-limits-{uuid.uuid4().hex[:8]}:"
    stack = Stack(StackConfig(
        # The tasks here read and write Redis only: the worker never opens its database.
        var_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'unused.sqlite3'}",
        broker_url=redis_url,
        queue_prefix=f"cp-limits-{uuid.uuid4().hex[:6]}", worker_concurrency=1,
        extra_env={"CP_TEST_BROKER_PREFIX": prefix,
                   "CP_BROKER_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
                   "CP_TASK_TIME_LIMIT_S": str(HARD_LIMIT_S),
                   "CP_LONG_TASK_TIME_LIMIT_S": str(HARD_LIMIT_S)}))
    command = stack.commands()["worker"]
    # The project's app with the test's key prefix, and the test's tasks beside its own.
    command[command.index("config")] = "tests.core.limits_worker"
    command += ["--include", "tests.core.hung_tasks"]
    assert command[:3] == [sys.executable, "-m", "celery"] and "--concurrency" in command
    stack.log_dir.mkdir(parents=True)
    with open(stack.log_dir / "worker.log", "ab") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=stack.env(), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    stack.procs["worker"] = proc
    broker = Broker(redis_url, prefix, f"{stack.config.queue_prefix}-default")
    try:
        yield broker, stack
    finally:
        stack.stop_process("worker", sig=signal.SIGTERM, timeout_s=15)
        broker.clear()


def test_a_hung_task_is_killed_at_its_limit_and_not_delivered_again(
        worker: tuple[Broker, Stack]) -> None:
    broker, stack = worker
    log = stack.log_dir / "worker.log"
    token = uuid.uuid4().hex
    broker.send("hang", token)

    started = wait_until("the hung task to start",
                         lambda: [r for r in broker.records(token) if r.startswith("started")],
                         60, log)
    pid = int(started[0].split()[1])
    # Acknowledged late: while it runs, its message is one Redis would hand out again.
    assert broker.redis.hlen(f"{broker.prefix}unacked") == 1

    # A stand-in for a worker that died holding a message: received after the hung task's
    # and never acknowledged. The worker's sweep puts it back on its queue once it is older
    # than the visibility timeout, and the same sweep would put back the hung task's message
    # too, had it not been acknowledged.
    with Connection(broker.url, transport_options=broker.options) as conn:
        canary = conn.SimpleQueue(f"canary-{token}")
        canary.put({"canary": True})
        held = canary.get(timeout=5)
        assert held.payload == {"canary": True}
        canary_queue = f"{broker.prefix}canary-{token}"
        assert broker.redis.llen(canary_queue) == 0

        wait_until("the hung task to be killed",
                   lambda: f"Hard time limit ({HARD_LIMIT_S}s) exceeded for "
                           f"tests.core.hung_tasks.hang" in log.read_text(errors="replace"),
                   30, log)
        wait_until("the killed process to be gone", lambda: not pid_alive(pid), 30, log)
        assert broker.records(token)[1:] == ["soft limit"], "stopped at the soft limit first"

        wait_until("the sweep to hand the abandoned message out again",
                   lambda: broker.redis.llen(canary_queue) == 1, VISIBILITY_S + 30, log)
        canary.consumer.channel.qos.restore_at_shutdown = False
        held.ack()

    # Had the sweep put the hung task back, the worker (one process) would start it before
    # a task queued after the sweep.
    broker.send("answer", token)
    wait_until("a task queued after the sweep to run",
               lambda: "answered" in broker.records(token), 60, log)
    records = broker.records(token)
    assert [r for r in records if r.startswith("started")] == started, records
    assert "finished" not in records
    assert records[-1] == "answered"
