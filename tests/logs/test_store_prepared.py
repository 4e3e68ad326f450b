"""On PostgreSQL the store's job facts statement is prepared once per database session: the
store gives what it gives with the statement sent as text, and a statement prepared in a
transaction that rolls back is still there for the next page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction

from controlplane.logs import store
from controlplane.logs.models import LogLine
from controlplane.runs.models import Job
from tests.logs.conftest import followed_job
from vertexplan.logparse.entries import LogEntry

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def _page(tag: str, steps: range, total: int) -> list[LogEntry]:
    """Step events (and a line from a replica the job does not have, refused) at steps'
    times."""
    page = [LogEntry(f"{tag}{n}", T0 + timedelta(seconds=n), 200, "42", "workerpool0-0",
                     json_payload={"event": "step", "step": float(n), "total_steps": total,
                                   "loss": 1.0 / n}, log_name="projects/p/logs/workerpool0-0")
            for n in steps]
    return [*page, LogEntry(f"{tag}x", T0, 200, "42", "workerpool3-9", text_payload="hi",
                            log_name="projects/p/logs/workerpool3-9")]


def _store_pages(job: Job) -> tuple[Any, ...]:
    targets = {"42": store.Target(job.pk, 1)}
    store.store_entries(_page("a", range(1, 6), 100), targets)
    store.store_entries(_page("b", range(6, 11), 200), targets)
    # A re-read of older steps: progress stays, the total is the page's.
    store.store_entries(_page("a", range(1, 4), 100), targets)
    job.refresh_from_db()
    return (job.last_step, job.last_loss, job.total_steps,
            LogLine.objects.filter(job=job).count())


def _another(job: Job) -> Job:
    return Job.objects.create(team=job.team, created_by=job.created_by, name="exp2",
                              request=job.request, custom_job=job.custom_job, project="p",
                              region=job.region, state=job.state)


def _forget_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """This session's statements deallocated and the process's count of them emptied."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'cp_log_%%'")
        for (name,) in cursor.fetchall():
            cursor.execute(f"DEALLOCATE {name}")
    monkeypatch.setattr(store, "_prepared", {})


def test_prepared_statements_give_what_the_text_statements_give(
        db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert connection.vendor == "postgresql"
    _forget_prepared(monkeypatch)
    job = followed_job()
    prepared = _store_pages(job)
    names = set(store._prepared)
    assert names == {store._FACTS_STATEMENT}
    monkeypatch.setattr(store, "_preparing", lambda cursor: False)
    as_text = _store_pages(_another(job))
    assert prepared == as_text == (10, 0.1, 100, 10)


def test_a_statement_prepared_in_a_rolled_back_page_serves_the_next(
        db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _forget_prepared(monkeypatch)
    job = followed_job()
    with pytest.raises(RuntimeError), transaction.atomic():
        store.store_entries(_page("r", range(1, 3), 100), {"42": store.Target(job.pk, 1)})
        raise RuntimeError("the follower's page failed after the store")
    assert not LogLine.objects.filter(job=job).exists()
    assert _store_pages(job) == (10, 0.1, 100, 10)
    # The process lost count of them: the session's statements are found, not prepared again.
    monkeypatch.setattr(store, "_prepared", {})
    assert _store_pages(_another(job)) == (10, 0.1, 100, 10)
