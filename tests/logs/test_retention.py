"""Retention per team (days, lines per job) and the downsampling of long runs' metrics."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.logs import retention
from controlplane.logs.bulk import insert_ignoring_duplicates
from controlplane.logs.models import LogLine, LogRetention, StepMetric
from controlplane.logs.store import LINE_COLUMNS, STEP_COLUMNS
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team

NOW = timezone.now()


@pytest.fixture
def job(team: Team, user: Any, postgres_url: str) -> Job:
    return Job.objects.create(team=team, created_by=user, name="long", request={},
                              custom_job={}, project="p", region="us-central1",
                              state=JobState.RUNNING)


def add_lines(job: Job, count: int, start: Any, step: timedelta = timedelta(seconds=1),
              prefix: str = "l") -> None:
    insert_ignoring_duplicates(LogLine, LINE_COLUMNS, [
        (job.pk, 1, start + i * step, 200, "workerpool0-0", f"{prefix} {i}", f"{prefix}{i:06d}")
        for i in range(count)])


def test_lines_older_than_the_teams_days_are_deleted(job: Job, team: Team) -> None:
    LogRetention.objects.create(team=team, days=7)
    add_lines(job, 10, NOW - timedelta(days=9), prefix="old")
    add_lines(job, 10, NOW - timedelta(days=2), prefix="new")
    report = retention.apply(NOW)
    assert report.lines_deleted == 10
    assert not LogLine.objects.filter(message__startswith="old").exists()
    assert LogLine.objects.filter(message__startswith="new").count() == 10


def test_a_job_keeps_its_newest_lines_up_to_the_cap(job: Job, team: Team) -> None:
    LogRetention.objects.create(team=team, max_lines_per_job=1000)
    add_lines(job, 1500, NOW - timedelta(hours=5))
    retention.apply(NOW)
    kept = list(LogLine.objects.filter(job=job).order_by("timestamp")
                .values_list("message", flat=True))
    assert len(kept) == 1000 and kept[0] == "l 500" and kept[-1] == "l 1499"


def test_lines_the_follower_may_still_read_are_never_deleted(job: Job, team: Team) -> None:
    LogRetention.objects.create(team=team, max_lines_per_job=1000)
    add_lines(job, 1500, NOW - timedelta(minutes=20), step=timedelta(milliseconds=100))
    assert retention.cap_lines(job, 1000, NOW) == 0  # all within the last hour


def test_long_runs_are_downsampled_keeping_the_shape_and_the_newest_points(
        job: Job, team: Team) -> None:
    LogRetention.objects.create(team=team, metric_points=1000)
    start = NOW - timedelta(days=1)
    insert_ignoring_duplicates(StepMetric, STEP_COLUMNS, [
        (job.pk, 1, step, start + timedelta(seconds=step), 10.0 / step, 1e-3, 1000.0 + step,
         0.5, 1, f"s{step}") for step in range(1, 5001)])
    retention.apply(NOW)
    rows = list(StepMetric.objects.filter(job=job).order_by("step"))
    assert 900 <= len(rows) <= 1100
    # Every step is still accounted for, and the newest half is untouched.
    assert sum(r.span for r in rows) == 5000
    assert [r.step for r in rows[-500:]] == list(range(4501, 5001))
    assert all(r.span == 1 for r in rows[-500:])
    assert rows[-1].step == 5000
    # A merged row holds the mean of the steps it stands for.
    merged = rows[0]
    assert merged.span > 1
    steps = range(merged.step - merged.span + 1, merged.step + 1)
    assert merged.loss == pytest.approx(sum(10.0 / s for s in steps) / merged.span)
    assert merged.tokens_per_s == pytest.approx(1000.0 + sum(steps) / merged.span)
    # Running it again changes nothing more than needed.
    again = retention.apply(NOW)
    assert again.steps_merged == 0
