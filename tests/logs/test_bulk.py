"""Storing a page: one COPY into the table when none of its rows is stored yet; when some
are, the staging table and ON CONFLICT DO NOTHING, nothing stored twice or lost."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from controlplane.logs.bulk import Batch, Inserted, insert_batches, insert_ignoring_duplicates
from controlplane.logs.models import LogLine
from controlplane.logs.store import LINE_COLUMNS
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user


def rows(job: Job, ids: range) -> list[tuple[Any, ...]]:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    return [(job.pk, 1, start + timedelta(seconds=i), 200, "workerpool0-0", f"line {i}",
             f"id-{i:04d}") for i in ids]


def test_a_fresh_page_is_one_copy_and_a_reread_one_insert(postgres_url: str,
                                                          team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=user, name="x", request={}, custom_job={},
                             project="p", region="r", state=JobState.RUNNING)
    new: set[tuple[Any, ...]] = set()
    with transaction.atomic(), CaptureQueriesContext(connection) as first:
        assert insert_ignoring_duplicates(LogLine, LINE_COLUMNS, rows(job, range(0, 100)),
                                          new_keys=(("job", "insert_id"), new)) == 100
    assert not any("ON CONFLICT" in q["sql"] for q in first.captured_queries), (
        "no stored row: no staging table")
    assert new == {(job.pk, f"id-{i:04d}") for i in range(100)}

    # Half already stored (a settle pass reading across the stored end): the rest is added.
    new.clear()
    with transaction.atomic(), CaptureQueriesContext(connection) as second:
        assert insert_ignoring_duplicates(LogLine, LINE_COLUMNS, rows(job, range(50, 150)),
                                          new_keys=(("job", "insert_id"), new)) == 50
    assert any("ON CONFLICT DO NOTHING" in q["sql"] for q in second.captured_queries)
    assert new == {(job.pk, f"id-{i:04d}") for i in range(100, 150)}
    stored = list(LogLine.objects.filter(job=job).order_by("insert_id")
                  .values_list("insert_id", flat=True))
    assert stored == [f"id-{i:04d}" for i in range(150)]

    # A page repeating a row within itself is stored once too.
    again = rows(job, range(150, 160))
    with transaction.atomic():
        assert insert_ignoring_duplicates(LogLine, LINE_COLUMNS, again + again[:3]) == 10
    assert LogLine.objects.filter(job=job).count() == 160


def test_rows_made_while_they_are_copied_are_all_stored_past_a_stored_one(
        postgres_url: str, team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=user, name="x", request={}, custom_job={},
                             project="p", region="r", state=JobState.RUNNING)
    made = rows(job, range(0, 20_000))
    finished: list[int] = []

    def store() -> list[Inserted]:
        page: list[tuple[Any, ...]] = []

        def produce() -> Iterator[None]:
            for row in made:
                page.append(row)
                yield

        with transaction.atomic():
            return insert_batches([Batch(LogLine, LINE_COLUMNS, page, ("job", "insert_id"))],
                                  produce=produce(),
                                  before_finish=lambda: finished.append(len(page)))

    # A row stored early in the page: PostgreSQL refuses the COPY while rows are still
    # being made; the rest are made and the page goes the careful way, nothing lost.
    with transaction.atomic():
        insert_ignoring_duplicates(LogLine, LINE_COLUMNS, [made[3]])
    [inserted] = store()
    assert inserted.count == 19_999 and finished == [20_000]
    assert LogLine.objects.filter(job=job).count() == 20_000
    # All of it again: nothing new.
    finished.clear()
    assert store()[0].count == 0 and finished == [20_000]
