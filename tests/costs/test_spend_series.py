"""A team's spend per day: each job's cost spread over the days it ran, and its clusters'
and sweeps', so the charts add up to the month's spend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.costs import spend
from controlplane.costs.standing import spend_series, summary
from controlplane.runs.models import Job, JobKind
from controlplane.sweeps.models import Sweep


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 10, day, hour, tzinfo=UTC)


def job_with(make_job: Callable[..., Job], name: str, **fields: Any) -> Job:
    job = make_job(name)
    Job.objects.filter(pk=job.pk).update(**fields)
    job.refresh_from_db()
    return job


def test_a_jobs_cost_is_spread_over_the_days_it_ran(make_job: Callable[..., Job]) -> None:
    long = job_with(make_job, "long", created_at=at(5, 17), started_at=at(5, 18),
                    ended_at=at(7, 6), cost_micros=3_000_000, state="SUCCEEDED")
    never = job_with(make_job, "never", created_at=at(6, 9), cost_micros=0, state="FAILED")
    # Still running at `now`: spread up to now, in whole micro-dollars that add up exactly.
    running = job_with(make_job, "running", created_at=at(7, 11), started_at=at(7, 12),
                       cost_micros=1_000_001, state="RUNNING")
    series = spend_series(long.team, date(2026, 10, 1), now=at(8, 12))
    by_job = {s["name"]: s for s in series["by_job"]}
    # 36 hours: 6 on the 5th, 24 on the 6th, 6 on the 7th; the series are cumulative.
    assert by_job[f"long #{long.pk}"]["days"] == ["2026-10-05", "2026-10-06", "2026-10-07"]
    assert by_job[f"long #{long.pk}"]["micros"] == [500_000, 2_500_000, 3_000_000]
    assert by_job[f"never #{never.pk}"]["days"] == ["2026-10-06"]
    assert by_job[f"running #{running.pk}"]["days"] == ["2026-10-07", "2026-10-08"]
    assert by_job[f"running #{running.pk}"]["micros"] == [500_000, 1_000_001]
    # The accelerator series adds the jobs up day by day: 0.5 + 2.0 + (0.5 + 0.5) + 0.5.
    (cpu,) = series["by_accelerator"]
    assert cpu["days"] == ["2026-10-05", "2026-10-06", "2026-10-07", "2026-10-08"]
    assert cpu["micros"] == [500_000, 2_500_000, 3_500_000, 4_000_001]
    assert cpu["usd"][-1] == 4.000001


def test_jobs_of_another_month_are_not_in_it(make_job: Callable[..., Job]) -> None:
    job = job_with(make_job, "september", created_at=datetime(2026, 9, 30, 23, tzinfo=UTC),
                   started_at=datetime(2026, 9, 30, 23, tzinfo=UTC), ended_at=at(1, 1),
                   cost_micros=2_000, state="SUCCEEDED")
    assert spend_series(job.team, date(2026, 10, 1), now=at(2))["by_job"] == []
    september = spend_series(job.team, date(2026, 9, 1), now=at(2))["by_job"]
    # Counted in the month it was created (as the budget counts it), drawn on the days it ran.
    assert september[0]["days"] == ["2026-09-30", "2026-10-01"]
    assert september[0]["micros"] == [1_000, 2_000]


def test_the_charts_add_up_to_the_months_spend_with_its_clusters_and_sweeps(
        make_job: Callable[..., Job], member_client: Client) -> None:
    now = timezone.now()
    # Spans in this month and already over, so the figures hold whenever they are read.
    base = max(now - timedelta(hours=2),
               datetime.combine(spend.month_start(now), time.min, tzinfo=UTC))
    done = base + (now - base) / 2
    job = job_with(make_job, "train", started_at=base, ended_at=done, cost_micros=1_000_003,
                   state="SUCCEEDED")
    team = job.team
    cluster = Cluster.objects.create(
        team=team, created_by=job.created_by, name="ray-a", region="us-central1", request={},
        resource={}, state=Cluster.State.DELETED, hourly_micros=2_500_000, created_at=base,
        deleted_at=done)
    sweep = Sweep.objects.create(
        team=team, created_by=job.created_by, name="lr", request={}, project="proj-1",
        tuning_job={}, region="us-central1", metric_id="loss", goal="MINIMIZE",
        state="SUCCEEDED", started_at=base, ended_at=done, cost_micros=700_001)
    # The sweep's trial: its money is the sweep's, never counted twice.
    job_with(make_job, "trial", kind=JobKind.TRIAL, started_at=base, ended_at=done,
             cost_micros=700_001, state="SUCCEEDED")
    spent = summary(team)["spent_micros"]
    assert spent > 1_000_003 + 700_001  # the cluster billed too

    series = member_client.get(reverse("api-team-spend", args=[team.slug])).json()
    assert {s["name"] for s in series["by_job"]} == {
        f"train #{job.pk}", f"Ray cluster ray-a #{cluster.pk}", f"Sweep lr #{sweep.pk}"}
    assert sum(s["micros"][-1] for s in series["by_job"]) == spent
    # Each series in a colour of its own (Plotly's cycle would repeat after ten).
    assert len({s["color"] for s in series["by_job"]}) == len(series["by_job"])
    by_accelerator = {s["name"]: s["micros"][-1] for s in series["by_accelerator"]}
    assert sum(by_accelerator.values()) == spent
    assert by_accelerator["Ray clusters"] == spent - 1_000_003 - 700_001
