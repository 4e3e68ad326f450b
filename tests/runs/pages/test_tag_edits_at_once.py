"""Two tag edits of one job at the same moment both stay: tags.update reads and writes the job's
row with the row locked, on PostgreSQL, so the second edit waits for the first and adds to it
(a read-modify-write would read the tags before the first's commit and write them back without
the first's tag)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from controlplane.runs import tags
from controlplane.runs.models import Job
from controlplane.teams.models import Team

WAIT_S = 30


def blocked_on_a_lock() -> bool:
    """Whether another session of this database waits on a lock (PostgreSQL's own view)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_two_members_adding_different_tags_at_once_both_keep_theirs(
        team: Team, member: Any, make_job: Callable[..., Job]) -> None:
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (DATABASE_URL), as the suite runs on")
    job = make_job(team, member, name="raced", tags={"keep": "me"})
    first_wrote, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def in_thread(body: Callable[[], None]) -> threading.Thread:
        def run() -> None:
            try:
                body()
            except BaseException as exc:  # reported by the test's own thread
                failures.append(exc)
            finally:
                connection.close()
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def first() -> None:
        # The first edit is written but not yet committed when the second one starts.
        with transaction.atomic():
            tags.update(Job.objects.get(pk=job.pk), add_tags={"owner": "ann"})
            first_wrote.set()
            assert release.wait(WAIT_S)

    def second() -> None:
        tags.update(Job.objects.get(pk=job.pk), add_tags={"experiment": "lr-sweep"})

    one = in_thread(first)
    assert first_wrote.wait(WAIT_S), failures
    two = in_thread(second)
    deadline = time.monotonic() + WAIT_S
    while not blocked_on_a_lock():
        assert time.monotonic() < deadline and two.is_alive(), (
            "the second edit never waited for the first one's lock", failures)
        time.sleep(0.01)
    release.set()
    one.join(WAIT_S)
    two.join(WAIT_S)
    assert not failures, failures
    job.refresh_from_db()
    assert job.tags == {"keep": "me", "owner": "ann", "experiment": "lr-sweep"}
