"""Storing a page: one COPY into the table when none of its rows is stored yet; when some
are, the staging table and ON CONFLICT DO NOTHING, nothing stored twice or lost; the foreign
key check overlapping the rest of the page, with the inserts queued behind it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from controlplane.logs.bulk import (
    Batch,
    Inserted,
    checked_meanwhile,
    insert_batches,
    insert_ignoring_duplicates,
)
from controlplane.logs.models import LogLine, StepMetric
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


def test_values_go_in_binary_and_come_back_as_given(postgres_url: str, team: Team) -> None:
    """The COPY sends each column in its own binary type, the first time and through the
    staging table: text a log may hold, floats a diverging run reports, JSON, None."""
    user = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=user, name="x", request={}, custom_job={},
                             project="p", region="r", state=JobState.RUNNING)
    at = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
    odd = ['a "quoted" word', "back\\slash", "NULL", "", "{braces, and commas}", "ünïcode",
           "two\nlines\ttabbed"]
    given = [(job.pk, 1, n, at + timedelta(seconds=n), loss, None, 1.5, 0.25, 1, insert_id,
              {"note": insert_id, "grad_norm": 2.0} if n % 2 else None)
             for n, (loss, insert_id) in enumerate(zip(
                 [float("nan"), float("inf"), -float("inf"), 1e-300, 3.0, 0.0, -2.5],
                 odd, strict=True))]
    columns = ("job", "attempt", "step", "timestamp", "loss", "lr", "tokens_per_s",
               "step_time_s", "span", "insert_id", "extra")

    def stored() -> list[tuple[Any, ...]]:
        return list(StepMetric.objects.filter(job=job).order_by("step").values_list(*[
            "job_id" if c == "job" else c for c in columns]))

    def same(rows: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> bool:
        losses = [row[4] for row in rows]
        return ([row[:4] + row[5:] for row in rows] == [row[:4] + row[5:] for row in expected]
                and math.isnan(losses[0]) and losses[1:] == [row[4] for row in expected[1:]])

    with transaction.atomic():
        assert insert_ignoring_duplicates(StepMetric, columns, given[:4]) == 4
    assert same(stored(), given[:4])
    # Half of it stored: the staging table's way, in binary too.
    with transaction.atomic():
        assert insert_ignoring_duplicates(StepMetric, columns, given) == 3
    assert same(stored(), given)


def test_a_row_of_a_job_that_is_gone_fails_the_transaction(postgres_url: str,
                                                           team: Team) -> None:
    """The key check that overlaps the block fails as the commit's would have: as Django's
    IntegrityError, with nothing of the transaction stored."""
    user = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=user, name="x", request={}, custom_job={},
                             project="p", region="r", state=JobState.RUNNING)
    gone = Job.objects.create(team=team, created_by=user, name="y", request={},
                              custom_job={}, project="p", region="r", state=JobState.RUNNING)
    gone_id = gone.pk
    gone.delete()
    # The test runs inside a transaction that is never committed, so a deferred key is never
    # checked there: only the block's check can raise.
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_ignoring_duplicates(LogLine, LINE_COLUMNS,
                                   rows(job, range(0, 5)) + rows(Job(pk=gone_id), range(5, 6)))
        with checked_meanwhile(LogLine):
            pass
    assert not LogLine.objects.filter(job_id__in=[job.pk, gone_id]).exists()
    # The keys are deferred again afterwards: a transaction may still write a row before
    # the row it refers to.
    with transaction.atomic():
        with checked_meanwhile(LogLine):
            pass
        later = Job(team=team, created_by=user, name="z", request={}, custom_job={},
                    project="p", region="r", state=JobState.RUNNING)
        later.pk = gone_id + 1000
        insert_ignoring_duplicates(LogLine, LINE_COLUMNS, rows(later, range(0, 1)))
        later.save(force_insert=True)
    assert LogLine.objects.filter(job_id=later.pk).count() == 1
