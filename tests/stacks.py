"""The whole stack as real processes (PostgreSQL, Redis, the emulator, worker, beat, web),
started through config.devstack (the same code `make demo` uses), and the fixtures that hold
it: a plugin of the root conftest, so each fixture has one definition and a test process
starts each kind of stack at most once, whichever directories its tests come from.

Every stack of a run gets its database as a copy of one migrated template (`CREATE DATABASE
... TEMPLATE`, a fraction of a second where `migrate` takes about twelve) and serves the
static files collected once: the run's first stack prepares both, under a lock in the run's
temporary folder, and the others (other test processes included) find them ready.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests

from config.devstack import Stack, StackConfig
from config.ports import reserve_port
from tests.notifications import slack_recorder

PREPARED = "stack-template.json"
StackT = TypeVar("StackT", bound=Stack)


class Api:
    """A scripted user of the REST API, as the README's curl examples."""

    # How often a wait asks again: the stack's own loops run every second, so half of that
    # sees a change soon after it happens, at a few milliseconds of the server's time a call.
    POLL_S = 0.5

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        # A fresh connection per call: a kept-alive one can be closed by the server just as a
        # request goes out on it, which would fail a test for a reason that is not the app's.
        self.session.headers["Connection"] = "close"

    def get(self, path: str, **params: Any) -> Any:
        response = self.session.get(self.base + path, params=params, timeout=30)
        response.raise_for_status()
        return response.json()

    def post(self, path: str, body: Any = None) -> requests.Response:
        return self.session.post(self.base + path, json=body, timeout=30)

    def wait_for(self, job_id: int, predicate: Callable[[dict], bool], *, timeout_s: float,
                 what: str, stack: Stack) -> dict:
        deadline = time.monotonic() + timeout_s
        job: dict = {}
        while time.monotonic() < deadline:
            job = self.get(f"/api/v1/jobs/{job_id}/")
            if predicate(job):
                return job
            dead = stack.dead()
            assert not dead, f"stack processes died: {dead}\n" + "\n".join(
                stack.log_tail(n) for n in dead)
            time.sleep(self.POLL_S)
        raise AssertionError(f"timed out waiting for {what}; last seen: {json.dumps(job)[:2000]}"
                             f"\n--- worker ---\n{stack.log_tail('worker')}"
                             f"\n--- emulator ---\n{stack.log_tail('emulator')}")

    def events_through(self, job_id: int, kind: str = "run_finished", *,
                       timeout_s: float = 60) -> list[dict]:
        """The job's events once one of ``kind`` is among them (by default the trainer's last
        line): the follower stores an ended job's last lines as Cloud Logging delivers them."""
        deadline = time.monotonic() + timeout_s
        while True:
            events = self.get(f"/api/v1/jobs/{job_id}/events/", limit=1000)["results"]
            if any(e["kind"] == kind for e in events) or time.monotonic() > deadline:
                return events
            time.sleep(self.POLL_S)

    def steps_through(self, job_id: int, last_step: int, *, timeout_s: float = 30) -> list[dict]:
        """The job's step points once ``last_step`` is among them: the follower may store a
        job's last lines a moment after its state flips to terminal, as Cloud Logging lags."""
        deadline = time.monotonic() + timeout_s
        while True:
            steps = self.get(f"/api/v1/jobs/{job_id}/steps/", limit=5000)["results"]
            if any(s["step"] >= last_step for s in steps) or time.monotonic() > deadline:
                return steps
            time.sleep(self.POLL_S)


def database_url(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(postgres_url: str, name: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def finished_runs(stack: Stack, task: str) -> int:
    """How many runs of a Celery task (its dotted name) the stack's worker has finished, as its
    log says them (`Task NAME[ID] succeeded in ...`)."""
    path = stack.log_dir / "worker.log"
    text = path.read_text(errors="replace") if path.exists() else ""
    return len(re.findall(rf"Task {re.escape(task)}\[[^\]]+\] succeeded", text))


def after_worker_runs(stack: Stack, task: str, runs: int = 2, timeout_s: float = 60) -> None:
    """Returns once the worker has finished `runs` more runs of a periodic task than when called:
    whatever those runs would do (submit again, send again) has been done by then. What a test
    waits on instead of sleeping for a while before asserting that nothing happened."""
    target = finished_runs(stack, task) + runs
    deadline = time.monotonic() + timeout_s
    while finished_runs(stack, task) < target:
        assert time.monotonic() < deadline, f"{task} did not run {runs} more times"
        dead = stack.dead()
        assert not dead, f"stack processes died: {dead}"
        time.sleep(0.2)


# --- one migrated template and one static folder for the run's stacks ----------------------

def _run_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every process of this run shares: pytest-xdist gives each worker a folder
    inside the run's (basetemp/popen-gwN)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _prepare(postgres_url: str, broker_url: str, folder: Path) -> dict[str, str]:
    """The run's template database and static folder, made by the first caller: migrated and
    collected by the same commands a stack's start runs (config.devstack)."""
    record = folder / PREPARED
    with open(folder / ".stack-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            return json.loads(record.read_text())
        name = f"cp_tmpl_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        prepared = {"template": name, "static_root": str(folder / "staticfiles")}
        maker = Stack(StackConfig(var_dir=folder / "template-stack",
                                  database_url=database_url(postgres_url, name),
                                  broker_url=broker_url,
                                  extra_env={"CP_STATIC_ROOT": prepared["static_root"]}))
        maker.prepare()
        # Written last: a run that failed half-way leaves no record, and the next caller
        # fails the same way instead of cloning a half-migrated database.
        record.write_text(json.dumps(prepared))
        return prepared


def copy_of_the_template(postgres_url: str, broker_url: str,
                                factory: pytest.TempPathFactory, name: str) -> None:
    """The test process's own database NAME, made afresh as a copy of the run's migrated
    template: the run migrates once (the template, under its lock) instead of once per test
    process and once more for the stacks (about 15 CPU-seconds each on two cores)."""
    prepared = _prepare(postgres_url, broker_url, _run_folder(factory))
    drop_database(postgres_url, name)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{prepared["template"]}"')


def prepared_config(postgres_url: str, broker_url: str, factory: pytest.TempPathFactory,
                    prefix: str, **fields: Any) -> tuple[StackConfig, str]:
    """A stack's configuration on a fresh copy of the run's migrated database, with its own
    queues and ports; and the database's name (drop_database removes it)."""
    prepared = _prepare(postgres_url, broker_url, _run_folder(factory))
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{prepared["template"]}"')
    extra_env = {"CP_STATIC_ROOT": prepared["static_root"], **fields.pop("extra_env", {})}
    config = StackConfig(
        var_dir=factory.mktemp(prefix), database_url=database_url(postgres_url, name),
        broker_url=broker_url, web_port=reserve_port(), emulator_port=reserve_port(),
        emulator_admin_port=reserve_port(), storage_port=reserve_port(),
        # Queues of its own: messages left by another run or stack can never reach this one.
        queue_prefix=f"{prefix.replace('_', '-')}-{uuid.uuid4().hex[:6]}",
        reconcile_interval_s=1.0, follow_interval_s=1.0, prepared=True,
        # The other rooms' sweeps every 2 s: each tick of each stack's beat is a task its
        # worker receives, runs and acknowledges, and a run keeps several stacks up at once.
        resource_reconcile_interval_s=2.0,
        # No request quota on the emulator: a stack's tests poll it as fast as they like
        # (tests/localvertex/test_request_quota.py and tests/runs hold the quota).
        crud_quota_per_minute=0, extra_env=extra_env, **fields)
    return config, name


@contextlib.contextmanager
def running(stack: StackT, postgres_url: str, database: str) -> Iterator[StackT]:
    """The stack started; stopped and its database dropped when the block ends, however."""
    try:
        # A bound for a hang, not a measure: at the end of a run on two loaded cores a web
        # server's first page has taken over a minute.
        stack.start(timeout_s=300)
        yield stack
    finally:
        stack.stop()
        drop_database(postgres_url, database)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's template goes when the run ends: in the process that is not a worker (the
    controller of an xdist run, or the only process of a plain one)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    record = factory.getbasetemp() / PREPARED
    url = os.environ.get("DATABASE_URL", "")
    if record.exists() and url.startswith(("postgres://", "postgresql://")):
        drop_database(url, json.loads(record.read_text())["template"])


# --- the stack most integration tests share --------------------------------------------------

@pytest.fixture(scope="session")
def stack(postgres_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Stack]:
    config, name = prepared_config(
        postgres_url, redis_url, tmp_path_factory, "cp_it",
        # A rate limit far above the API rate of one user: schemathesis
        # (test_api_contract.py) sends thousands of requests with one token.
        extra_env={"CP_RESUBMIT_AFTER_S": "10", "CP_API_RATE_USER": "100000/minute"})
    with running(Stack(config), postgres_url, name) as stack:
        yield stack


@pytest.fixture(scope="session")
def seeded(stack: Stack) -> dict[str, Any]:
    return json.loads(stack.manage("seed_demo", "--username", "alice", "--team", "vision",
                                   capture=True))


@pytest.fixture(scope="session")
def api(stack: Stack, seeded: dict[str, Any]) -> Api:
    return Api(stack.web_url, seeded["token"])


# --- the survival stack: short recovery backoffs and a Slack recorder ------------------------

def sleeping_job(name: str, seconds: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": ["python", "-c", f"import time; time.sleep({seconds})"],
            "args": [], "chief": {"machine_type": "n1-standard-4"}, **extra}


class SurvivalStack(Stack):
    """The stack, with emulator flags of its own (a short default preemption notice)."""

    def __init__(self, config: StackConfig, emulator_flags: list[str]) -> None:
        super().__init__(config)
        self.emulator_flags = emulator_flags

    def commands(self) -> dict[str, list[str]]:
        commands = super().commands()
        commands["emulator"] = [*commands["emulator"], *self.emulator_flags]
        return commands

    @property
    def emulator_addr(self) -> str:
        return f"127.0.0.1:{self.config.emulator_port}"


def new_stack(postgres_url: str, broker_url: str, factory: pytest.TempPathFactory,
              extra_env: dict[str, str]) -> tuple[SurvivalStack, str]:
    config, name = prepared_config(postgres_url, broker_url, factory, "cp_sv", extra_env={
        "CP_RESUBMIT_AFTER_S": "5", "CP_RECOVERY_BACKOFF_S": "1",
        "CP_RECOVERY_BACKOFF_CAP_S": "5", "CP_RECOVERY_FALLBACK": "FLEX_START,STANDARD",
        "CP_QUOTA_RETRY_S": "1", "CP_QUOTA_RETRY_CAP_S": "3", "CP_QUOTA_CACHE_S": "0",
        **extra_env})
    return SurvivalStack(config, emulator_flags=["--preempt-grace", "20"]), name


@pytest.fixture(scope="session")
def recorder() -> Iterator[slack_recorder.SlackRecorder]:
    """A Slack recorder for the run (tests/notifications, tests/costs, the survival stack)."""
    server = slack_recorder.start()
    yield server
    server.close()
