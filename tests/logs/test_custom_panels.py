"""A step event's other numbers (grad_norm, epoch, a team's own metric) are kept with the step
and become the job page's custom panels (metrics.json `custom`); names and values are bounded
as a metric's, and downsampling merges them as it merges the charted columns."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import Client
from django.urls import reverse

from controlplane.logs import retention
from controlplane.logs.models import LogRetention, StepMetric
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job
from tests.logs.conftest import followed_job
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.events import MAX_EXTRA_VALUES

_ids = itertools.count(1)
T0 = datetime(2026, 5, 1, tzinfo=UTC)


def step(job: Job, n: int, at: datetime | None = None, **fields: Any) -> None:
    i = next(_ids)
    payload = {"severity": "INFO", "message": f"step {n}", "event": "step", "step": n,
               "total_steps": 100, "loss": 2.0 / n, "lr": 1e-3, **fields}
    store_entries([LogEntry(insert_id=f"c{i}", timestamp=at or T0 + timedelta(seconds=i),
                            severity=200, job_id="42", task_name="workerpool0-0",
                            json_payload=payload, log_name="projects/p/logs/workerpool0-0")],
                  {"42": Target(job.pk, 1)})


def test_other_numbers_are_kept_bounded_and_drawn(db: None, client: Client) -> None:
    job = followed_job()
    step(job, 1, grad_norm=1.5, epoch=0.1, accuracy=0.25, flag=True, nested={"a": 1},
         text="x", **{"bad name": 1.0, "ünïcode": 2.0, "x" * 41: 3.0, "1st": 4.0,
                      "train/acc": 0.5})
    step(job, 2, grad_norm=1.25, epoch=0.2)
    step(job, 3)
    extras = list(StepMetric.objects.filter(job=job).order_by("step")
                  .values_list("extra", flat=True))
    assert extras == [{"grad_norm": 1.5, "epoch": 0.1, "accuracy": 0.25, "train/acc": 0.5},
                      {"grad_norm": 1.25, "epoch": 0.2}, None]
    client.force_login(job.created_by)
    body = client.get(reverse("job-metrics", args=[job.pk])).json()
    assert body["custom"] == {"grad_norm": [1.5, 1.25, None], "epoch": [0.1, 0.2, None],
                              "accuracy": [0.25, None, None], "train/acc": [0.5, None, None]}
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'id="custom-panels"' in page


def test_at_most_sixteen_numbers_a_step(db: None) -> None:
    job = followed_job()
    step(job, 1, **{f"m{i}": float(i) for i in range(40)})
    extra = StepMetric.objects.get(job=job).extra
    assert extra == {f"m{i}": float(i) for i in range(MAX_EXTRA_VALUES)}


def test_downsampling_merges_the_other_numbers_by_span(db: None) -> None:
    job = followed_job()
    LogRetention.objects.create(team=job.team, metric_points=10)
    now = T0 + timedelta(days=2)
    for n in range(1, 41):
        step(job, n, at=T0 + timedelta(seconds=n), grad_norm=float(n),
             **({"odd": 1.0} if n % 2 else {}))
    retention.apply(now)
    rows = list(StepMetric.objects.filter(job=job).order_by("step"))
    assert sum(r.span for r in rows) == 40 and len(rows) < 40
    merged = next(r for r in rows if r.span > 1)
    before = sum(r.span for r in rows[:rows.index(merged)])
    covered = range(before + 1, before + merged.span + 1)
    assert merged.extra["grad_norm"] == sum(covered) / len(covered)
    assert merged.extra["odd"] == 1.0  # the mean over the rows that have it
