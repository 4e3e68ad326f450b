"""The worker keeps its database connection from task to task (beat queues several tasks a
second: a new PostgreSQL backend for each was much of an idle stack's work), and a connection
the server dropped is opened again before a task uses it, not found broken by the task."""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import urlsplit

import psycopg
import pytest

from config.celery import WORKER_CONNECTION_NAME
from config.devstack import Stack
from tests.stacks import after_worker_runs

pytestmark = pytest.mark.integration

TICK = "controlplane.runs.tasks.reconcile_jobs"
RECEIVED = re.compile(r"\[(?P<at>[\d-]+ [\d:,]+): INFO/MainProcess\] Task [\w.]+\[(?P<id>[\w-]+)\] "
                      r"received")
FAILED = re.compile(r"Task [\w.]+\[(?P<id>[\w-]+)\] raised unexpected")


def _when(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")


def _database(stack: Stack) -> str:
    return urlsplit(stack.config.database_url).path.lstrip("/")


def _sessions(postgres_url: str, database: str) -> int:
    """Sessions PostgreSQL has opened on the database so far (its cumulative statistics,
    read fresh: a statistics snapshot is otherwise kept for the transaction)."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s",
                           (database,)).fetchone()
    assert row is not None, database
    return int(row[0])


def _worker_log(stack: Stack) -> str:
    return (stack.log_dir / "worker.log").read_text(errors="replace")


def test_the_worker_keeps_its_connection_across_tasks(stack: Stack, postgres_url: str) -> None:
    database = _database(stack)
    after_worker_runs(stack, TICK, runs=1)
    before = _sessions(postgres_url, database)
    # Ten of one periodic task, with every other periodic task in between: 40 and more tasks.
    after_worker_runs(stack, TICK, runs=10)
    opened = _sessions(postgres_url, database) - before
    # The web server and a test's own reads may open a few; a connection per task would be 40+.
    assert opened < 10, f"{opened} sessions opened for 10+ tasks"


def test_a_dropped_connection_is_replaced_before_a_task_uses_it(
        stack: Stack, postgres_url: str) -> None:
    database = _database(stack)
    after_worker_runs(stack, TICK, runs=1)
    offset = len(_worker_log(stack))
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        # The worker's connections only: the web server's are other tests' on this stack.
        ended = conn.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name = %s",
            (database, WORKER_CONNECTION_NAME)).fetchone()
    dropped_at = datetime.now()  # the worker's log is in this machine's local time
    assert ended is not None and ended[0] >= 1, "the worker held no connection to drop"
    after_worker_runs(stack, TICK, runs=3)
    log = _worker_log(stack)
    received = {m["id"]: _when(m["at"]) for m in RECEIVED.finditer(log)}
    # A task whose query was running as its connection was dropped fails: none that came after.
    for failed in FAILED.finditer(log[offset:]):
        assert received.get(failed["id"], dropped_at) < dropped_at, log[offset:][-3000:]
