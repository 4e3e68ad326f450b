"""core.row_updates.update_fields writes what Django's bulk_update writes, in one statement on
PostgreSQL whatever the number of rows: integers, text, times (and no time), JSON, a foreign
key; rows not given are left alone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from controlplane.core.row_updates import update_fields
from controlplane.logs.models import FrameworkTrack
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
