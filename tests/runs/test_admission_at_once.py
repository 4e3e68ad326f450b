"""Admission is exactly once under concurrent workers, on PostgreSQL: a second beat tick while
one is in its round gets no lease and does nothing; a tick after the first worker's lease
expired (a killed worker) waits on the first's row locks and then finds nothing left to
admit. Each job is admitted once and Vertex gets one CustomJob for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from controlplane.core.models import Lease
from controlplane.runs import admission
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user
from tests.runs.test_admission import job, project_quota, quotas  # noqa: F401 (a fixture)

WAIT_S = 30


def sessions_waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("project_quota", "eager")
def test_two_ticks_and_a_killed_workers_lease_admit_each_job_once(
        team: Team, other_team: Team, backend: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (DATABASE_URL), as the suite runs on")
    quotas(team, other_team)
    ann = make_user("ann", team, Role.MEMBER)
    jobs = [job(team, ann, 8), job(other_team, ann, 8)]
    locked, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}
    failures: list[BaseException] = []

    def in_thread(name: str, body: Callable[[], Any]) -> threading.Thread:
        def run() -> None:
            try:
                results[name] = body()
            except BaseException as exc:  # reported by the test's own thread
                failures.append(exc)
            finally:
                connection.close()
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def hold_a_row() -> None:
        # Someone else holds one queued job's row: the first tick waits on it inside its round.
        with transaction.atomic():
            Job.objects.select_for_update().get(pk=jobs[0].pk)
            locked.set()
            assert release.wait(WAIT_S)

    def wait_for(waiting: int) -> None:
        deadline = time.monotonic() + WAIT_S
        while sessions_waiting_on_locks() < waiting:
            assert time.monotonic() < deadline, ("no tick waited on the row lock", failures)
            time.sleep(0.01)

    holder = in_thread("holder", hold_a_row)
    assert locked.wait(WAIT_S), failures
    first = in_thread("first", admission.tick)
    wait_for(1)
    # A second beat tick during the first's round: the lease is taken, it does nothing.
    assert admission.tick() is None
    # The first worker is killed (its lease runs out while its round is still open): a later
    # tick takes the lease and waits on the same rows.
    Lease.objects.filter(name=admission.LEASE).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    later = in_thread("later", admission.tick)
    wait_for(2)
    release.set()
    for thread in (holder, first, later):
        thread.join(WAIT_S)
    assert not failures, failures
    admitted = results["first"].admit + results["later"].admit
    assert sorted(admitted) == sorted(str(j.pk) for j in jobs)
    for made in jobs:
        made.refresh_from_db()
        assert made.state != JobState.QUEUED_LOCAL
        assert made.events.filter(kind="state", data__to=JobState.QUEUED,
                                  data__source="admission").count() == 1
    assert sorted(c["displayName"] for c in backend.created) == sorted(
        j.display_name for j in jobs)
