"""A job's restart count as its log pages are stored: the processes a replica starts together
(a process per GPU, a TPU slice's hosts) are one run, however the pages cut their lines; a log
that starts over is a restart, counted as the restart records say."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobRestart
from tests.logs.conftest import followed_job
from vertexplan.logparse.entries import LogEntry

_ids = itertools.count(1)
T0 = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.fixture
def job(db: None) -> Job:
    return followed_job()


def entry(payload: dict[str, Any] | None = None, text: str | None = None) -> LogEntry:
    n = next(_ids)
    return LogEntry(insert_id=f"r{n}", timestamp=T0 + timedelta(seconds=n), severity=200,
                    job_id="42", task_name="workerpool0-0", json_payload=payload,
                    text_payload=text, log_name="projects/p/logs/workerpool0-0")


def run_started(rank: int, world_size: int) -> LogEntry:
    return entry({"severity": "INFO", "message": "run started", "event": "run_started",
                  "rank": rank, "world_size": world_size})


Store = Callable[[list[LogEntry]], int]


@pytest.fixture
def store(job: Job, django_capture_on_commit_callbacks: Any) -> Store:
    """Store one page as the follower does (its commit runs what waits for it); the job's
    restart count after it."""
    def page(entries: list[LogEntry]) -> int:
        with django_capture_on_commit_callbacks(execute=True):
            store_entries(entries, {"42": Target(job.pk, 1)})
        job.refresh_from_db()
        return job.restarts
    return page


def test_a_process_per_gpu_starts_one_run_not_seven_restarts(store: Store) -> None:
    assert store([run_started(rank, 8) for rank in range(8)]) == 0


def test_a_slices_hosts_start_one_run_across_pages(store: Store) -> None:
    assert store([run_started(0, 4), run_started(1, 4)]) == 0
    assert store([run_started(2, 4), run_started(3, 4)]) == 0


def test_a_log_that_starts_over_is_one_restart_with_its_record(store: Store, job: Job) -> None:
    assert store([run_started(0, 2), run_started(1, 2)]) == 0
    restarted = entry(text="Restarting replica workerpool0-0 (restart 1 of 5), exit code 1")
    second_run = [restarted, run_started(0, 2), run_started(1, 2)]
    assert store(second_run) == 1
    (record,) = JobRestart.objects.filter(job=job)
    assert record.replica == "workerpool0-0" and record.cause == "crash"
    # The same page read again (the follower's overlap) counts nothing twice.
    assert store(second_run) == 1
    assert JobRestart.objects.filter(job=job).count() == 1
