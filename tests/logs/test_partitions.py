"""The log table by week on PostgreSQL: where lines land, weeks made late, and retention
dropping whole weeks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from controlplane.logs import partitions, retention
from controlplane.logs.models import LogLine, LogRetention
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team
from tests.logs.test_retention import add_lines
from vertexplan.logparse.entries import LogEntry

NOW = timezone.now()


@pytest.fixture
def job(team: Team, user: Any, postgres_url: str) -> Job:
    return Job.objects.create(team=team, created_by=user, name="weekly", request={},
                              custom_job={}, project="p", region="us-central1",
                              state=JobState.RUNNING)


def where(job: Job) -> dict[str, int]:
    """Partition name -> how many of the job's lines it holds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text, count(*) FROM jobs_logline "
                       "WHERE job_id = %s GROUP BY 1", [job.pk])
        return dict(cursor.fetchall())


def test_weeks_run_monday_to_monday_in_utc() -> None:
    week = partitions.week_of(datetime(2026, 11, 29, 23, 59, tzinfo=UTC))  # a Sunday
    assert week.name == "jobs_logline_w20261123"
    assert (week.begins, week.ends) == (datetime(2026, 11, 23, tzinfo=UTC),
                                        datetime(2026, 11, 30, tzinfo=UTC))


def test_a_line_lands_in_its_weeks_partition_and_an_old_one_in_the_default(job: Job) -> None:
    assert partitions.is_partitioned()
    this_week = partitions.week_of(NOW)
    assert {this_week, partitions.week_of(NOW + partitions.AHEAD_WEEKS * partitions.WEEK)} <= \
        set(partitions.weeks())  # made ahead
    entries = [LogEntry(f"i{n}", at, 200, "77", "workerpool0-0", text_payload=f"line {n}")
               for n, at in enumerate([NOW, NOW - timedelta(days=400)])]
    stored = store_entries(entries, {"77": Target(job.pk, 1)})
    assert stored.lines == 2
    assert where(job) == {this_week.name: 1, partitions.DEFAULT: 1}
    # Read again, time and all: the key (job, timestamp, insertId) keeps each once.
    assert store_entries(entries, {"77": Target(job.pk, 1)}).lines == 0
    assert LogLine.objects.filter(job=job).count() == 2


def test_a_week_made_late_takes_its_lines_over_from_the_default(job: Job) -> None:
    late = partitions.week_of(NOW - 5 * partitions.WEEK)
    assert late not in partitions.weeks()
    add_lines(job, 30, late.begins + timedelta(hours=1), step=timedelta(hours=1))
    assert where(job) == {partitions.DEFAULT: 30}
    made = partitions.ensure(NOW, since=late.begins)
    assert made[0] == late and len(made) >= 5  # the weeks up to the oldest one there was
    assert where(job) == {late.name: 30}
    assert LogLine.objects.filter(job=job).count() == 30


def test_retention_drops_whole_weeks_past_the_longest_window(job: Job, team: Team,
                                                             other_team: Team,
                                                             user: Any) -> None:
    LogRetention.objects.create(team=team, days=21)
    LogRetention.objects.create(team=other_team, days=7)
    short = Job.objects.create(team=other_team, created_by=user, name="short", request={},
                               custom_job={}, project="p", region="us-central1",
                               state=JobState.SUCCEEDED)
    partitions.ensure(NOW, since=NOW - 8 * partitions.WEEK)
    old_week = partitions.week_of(NOW - 6 * partitions.WEEK)
    add_lines(job, 20, old_week.begins + timedelta(hours=2), prefix="old")
    add_lines(job, 10, NOW - timedelta(days=12), prefix="kept")
    add_lines(short, 10, NOW - timedelta(days=12), prefix="past")
    add_lines(short, 5, NOW - timedelta(days=2), prefix="recent")

    report = retention.apply(NOW)

    # Every week that ended 21 days (and the follower's hour) ago went whole: no row deleted.
    gone = [w for w in partitions.weeks() if w.ends <= NOW - timedelta(days=21, hours=1)]
    assert gone == [] and old_week not in partitions.weeks()
    assert report.weeks_dropped >= 3
    assert not LogLine.objects.filter(message__startswith="old").exists()
    # The longest window's lines inside it stay; the shorter one's are deleted row by row.
    assert LogLine.objects.filter(job=job, message__startswith="kept").count() == 10
    assert list(LogLine.objects.filter(job=short).values_list("message", flat=True)
                .distinct()) == ["recent 0", "recent 1", "recent 2", "recent 3", "recent 4"]
    assert report.lines_deleted == 10
    # Weeks ahead are still made, so tomorrow's lines never wait for the default.
    assert partitions.week_of(NOW + 2 * partitions.WEEK) in partitions.weeks()
