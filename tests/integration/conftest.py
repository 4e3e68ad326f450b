"""The whole stack as real processes: PostgreSQL, Redis, the emulator, worker, beat, web.

Started once per test session through config.devstack (the same code `make demo` uses),
on a database of its own so it never touches pytest-django's test database.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests

from config.devstack import Stack, StackConfig, free_port
from tests.conftest import require

# The browser tests drive the system's chromium (installed by .ci/run); Playwright's own
# download is never used.
CHROMIUM = os.environ.get("CP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class Api:
    """A scripted user of the REST API, as the README's curl examples."""

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
            time.sleep(1)
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
            time.sleep(1)

    def steps_through(self, job_id: int, last_step: int, *, timeout_s: float = 30) -> list[dict]:
        """The job's step points once ``last_step`` is among them: the follower may store a
        job's last lines a moment after its state flips to terminal, as Cloud Logging lags."""
        deadline = time.monotonic() + timeout_s
        while True:
            steps = self.get(f"/api/v1/jobs/{job_id}/steps/", limit=5000)["results"]
            if any(s["step"] >= last_step for s in steps) or time.monotonic() > deadline:
                return steps
            time.sleep(1)


def _database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def stack(postgres_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Stack]:
    name = f"cp_it_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    var_dir: Path = tmp_path_factory.mktemp("stack")
    stack = Stack(StackConfig(
        var_dir=var_dir, database_url=_database(postgres_url, name), broker_url=redis_url,
        web_port=free_port(), emulator_port=free_port(),
        # A queue of its own: messages left by another run can never reach this one.
        queue_prefix=f"cp-it-{uuid.uuid4().hex[:6]}",
        reconcile_interval_s=1.0, follow_interval_s=1.0,
        # A rate limit far above the API rate of one user: schemathesis
        # (test_api_contract.py) sends thousands of requests with one token.
        extra_env={"CP_RESUBMIT_AFTER_S": "10", "CP_API_RATE_USER": "100000/minute"},
    ))
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def seeded(stack: Stack) -> dict[str, Any]:
    return json.loads(stack.manage("seed_demo", "--username", "alice", "--team", "vision",
                                   capture=True))


@pytest.fixture(scope="session")
def api(stack: Stack, seeded: dict[str, Any]) -> Api:
    return Api(stack.web_url, seeded["token"])


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright; with CI=true a missing chromium fails.

    One per test module: Playwright's sync API keeps an asyncio loop running in the test's
    thread while it is open, and Django refuses database calls from such a thread. A module's
    browser closes before the next module's tests, which may use the database, run on its
    process."""
    require(Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
            f"chromium is not installed at {CHROMIUM} (.ci/run installs Debian's)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        try:
            yield browser
        finally:
            browser.close()
