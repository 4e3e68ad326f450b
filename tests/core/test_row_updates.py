"""core.row_updates.update_fields writes what Django's bulk_update writes, in one statement on
PostgreSQL whatever the number of rows: integers, text, times (and no time), JSON, a foreign
key; rows not given are left alone."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from controlplane.core.row_updates import update_each, update_fields
from controlplane.logs.models import FrameworkTrack
from controlplane.logs.store import refresh_progress
from controlplane.runs.models import Job
from controlplane.teams.models import Team

FIELDS = {"job": ["cost_micros", "restart_scan", "notices_scanned_to", "request"],
          "track": ["framework", "state", "lines_read"]}


def _jobs(team: Team, count: int) -> list[Job]:
    user = get_user_model().objects.create(username=f"u{Job.objects.count()}")
    return Job.objects.bulk_create([Job(team=team, created_by=user, name=f"j{i}", request={},
                                        custom_job={}) for i in range(count)])


def _change(jobs: list[Job], tracks: list[FrameworkTrack]) -> None:
    for i, job in enumerate(jobs):
        job.cost_micros = 10**12 + i
        job.restart_scan = f"scan-'{i}'\"" if i % 2 else ""
        job.notices_scanned_to = datetime(2026, 12, 1, 10, i % 60, tzinfo=UTC) if i % 3 else None
        job.request = {"name": f"j{i}", "nested": [1, None, {"a": "é"}]} if i % 2 else {}
    for i, track in enumerate(tracks):
        track.framework, track.state, track.lines_read = "hf_trainer", {"step": i}, i * 7


def _written(jobs: list[Job], tracks: list[FrameworkTrack]) -> list[Any]:
    return [list(Job.objects.filter(pk__in=[j.pk for j in jobs]).order_by("pk")
                 .values_list("pk", *FIELDS["job"])),
            list(FrameworkTrack.objects.filter(pk__in=[t.pk for t in tracks]).order_by("pk")
                 .values_list("pk", *FIELDS["track"]))]


@pytest.mark.django_db
def test_the_rows_are_written_as_bulk_update_writes_them(team: Team) -> None:
    written = []
    for write in (update_fields,
                  lambda objs, fields: type(objs[0]).objects.bulk_update(objs, fields)):
        jobs = _jobs(team, 30)
        tracks = FrameworkTrack.objects.bulk_create(
            [FrameworkTrack(job=job, replica="workerpool0-0") for job in jobs[:5]])
        _change(jobs, tracks)
        assert write(jobs, FIELDS["job"]) == 30
        assert write(tracks, FIELDS["track"]) == 5
        # Ids differ between the two rounds; what was written must not.
        written.append([[row[1:] for row in table] for table in _written(jobs, tracks)])
    assert written[0] == written[1]
    assert written[0][0][1] == (10**12 + 1, "scan-'1'\"",
                                datetime(2026, 12, 1, 10, 1, tzinfo=UTC),
                                {"name": "j1", "nested": [1, None, {"a": "é"}]})


@pytest.mark.django_db
def test_one_statement_whatever_the_rows_and_the_others_untouched(team: Team) -> None:
    jobs = _jobs(team, 600)
    for job in jobs:
        job.cost_micros = 5
    with CaptureQueriesContext(connection) as queries:
        assert update_fields(jobs[:500], ["cost_micros"]) == 500
    # One statement, the rows as arrays: no CASE arm a row, as bulk_update writes.
    assert len(queries) == 1 and "CASE" not in queries[0]["sql"], queries[0]["sql"][:500]
    assert Job.objects.filter(cost_micros=5).count() == 500
    assert Job.objects.get(pk=jobs[-1].pk).cost_micros == 0


@pytest.mark.django_db
def test_nothing_to_write_asks_nothing_and_the_key_is_refused(team: Team) -> None:
    job = _jobs(team, 1)[0]
    with CaptureQueriesContext(connection) as queries:
        assert update_fields([], ["cost_micros"]) == 0
        assert update_fields([job], []) == 0
    assert not queries
    with pytest.raises(ValueError, match="non-key"):
        update_fields([job], ["id"])
    with pytest.raises(ValueError, match="once"):
        update_fields([job, Job.objects.get(pk=job.pk)], ["cost_micros"])


def _held_by_me() -> bool:
    """Whether another backend waits on a lock this connection holds."""
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL answers from one snapshot of the sessions unless
        # it is cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity"
                       " WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))")
        return cursor.fetchone()[0] > 0


def _update_fields(jobs: list[Job]) -> None:
    for job in jobs:
        job.cost_micros = 7
    update_fields(jobs, ["cost_micros"])


def _update_each(jobs: list[Job]) -> None:
    update_each(Job, [job.pk for job in jobs], cost_micros=7)


def _progress(jobs: list[Job]) -> None:
    refresh_progress({job.pk for job in jobs}, {job.pk: 7 for job in jobs})


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("write", [_update_fields, _update_each, _progress])
def test_rows_are_locked_in_key_order_before_any_is_written(team: Team, write: Any) -> None:
    """Two writers of overlapping rows that each lock them in the order their plan meets them
    deadlock (a sweep's restart scans and the log store's progress did, with 10,000 jobs).
    Here the highest key is held elsewhere: a writer in key order waits there holding every
    lower row; one in the heap's order meets the held row first (the lower ones, updated
    last, lie after it in the heap) and holds nothing while it waits."""
    jobs = _jobs(team, 3)
    for job in jobs[:2]:
        Job.objects.filter(pk=job.pk).update(cost_micros=1)  # moved after jobs[2] in the heap
    done: list[BaseException | None] = []

    def writer() -> None:
        try:
            write(jobs)
            done.append(None)
        except BaseException as exc:
            done.append(exc)
        finally:
            connections.close_all()

    with transaction.atomic():
        Job.objects.select_for_update().get(pk=jobs[2].pk)
        thread = threading.Thread(target=writer)
        thread.start()
        deadline = time.monotonic() + 30
        while not _held_by_me():
            assert time.monotonic() < deadline and thread.is_alive(), done
            time.sleep(0.02)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {Job._meta.db_table} WHERE id = ANY(%s)"
                           " FOR UPDATE SKIP LOCKED", [[job.pk for job in jobs[:2]]])
            free = cursor.fetchall()
    thread.join(30)
    assert done == [None]
    assert free == [], "the writer waited for the highest key before locking the lower ones"
