"""An ended job's goodput is computed once and kept (controlplane/costs/goodput_cache.py): the
kept figure equals a fresh one to the last float and micro-dollar, a team's month then reads
no step rows for it, and a job that ended moments ago, or ran again since, is computed
afresh."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from controlplane.costs import goodput, goodput_cache, spend
from controlplane.costs.models import EndedGoodput
from controlplane.logs.models import StepMetric
from controlplane.runs.models import Job
from tests.costs.test_goodput_api import finished_job
from tests.fakes import FakeBackend


def reads_steps(queries: CaptureQueriesContext) -> bool:
    return any(StepMetric._meta.db_table in q["sql"] for q in queries.captured_queries)


def test_an_ended_jobs_goodput_is_kept_once_and_equals_a_fresh_one(
        make_job: Callable[..., Job], backend: FakeBackend, team: Any) -> None:
    now = timezone.now()
    job = finished_job(make_job, backend, now - timedelta(hours=2))
    fresh = goodput._computed([job], now)[0].split
    assert not EndedGoodput.objects.exists()
    month = goodput.team_month(team, spend.month_start(job.created_at), now)
    assert EndedGoodput.objects.get().job_id == job.pk
    with CaptureQueriesContext(connection) as queries:
        kept = goodput.of_job(Job.objects.get(pk=job.pk), now)
    assert kept == fresh and not reads_steps(queries)
    assert sum(c.micros or 0 for c in kept.categories) > 0
    assert goodput.team_month(team, spend.month_start(job.created_at), now) == month
    # Ran again since (a new attempt): computed afresh, and kept for its new end.
    Job.objects.filter(pk=job.pk).update(attempt=2)
    with CaptureQueriesContext(connection) as queries:
        goodput.of_job(Job.objects.get(pk=job.pk), now)
    assert reads_steps(queries) and EndedGoodput.objects.get().attempt == 2


def test_a_job_that_just_ended_or_still_runs_is_not_kept(
        make_job: Callable[..., Job], backend: FakeBackend) -> None:
    now = timezone.now()
    ended = finished_job(make_job, backend, now - timedelta(hours=2), "ended")
    just = now - goodput_cache.SETTLE + timedelta(minutes=1)
    Job.objects.filter(pk=ended.pk).update(ended_at=just)
    running = make_job("running")
    goodput.of_jobs(list(Job.objects.filter(pk__in=[ended.pk, running.pk])), now)
    assert not EndedGoodput.objects.exists()
    goodput.of_jobs(list(Job.objects.filter(pk=ended.pk)), now + timedelta(minutes=2))
    assert EndedGoodput.objects.get().job_id == ended.pk
