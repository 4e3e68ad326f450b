"""Ended jobs' goodput, computed once: a team's month reads one row per ended job instead of
every step row of every job (controlplane/costs/goodput.py's of_jobs asks here first).

A row is kept per job, not per attempt: an attempt's split depends on the job's other
attempts (the steps an earlier one reached are replayed by the next; one step's time is the
median over all of them), so only the whole ended job is final. It is written once the job
ended more than SETTLE ago (its last lines reach the log store after its end state: the
follower's and Cloud Logging's delays), keyed by the attempt it ended on and when, so a job
that runs again is computed afresh; a row of another FORMAT is too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from controlplane.costs.models import EndedGoodput
from controlplane.runs.models import TERMINAL_STATES, Job
from vertexplan import goodput as calc

SETTLE = timedelta(minutes=15)
FORMAT = 1


def settled(job: Job, now: datetime) -> bool:
    """Whether the job's goodput is final: ended, and long enough ago."""
    return job.state in TERMINAL_STATES and job.ended_at is not None and \
        job.ended_at <= now - SETTLE


def read(jobs: Sequence[Job], now: datetime) -> dict[int, calc.Goodput]:
    """The stored goodput of each settled job that has a row of its present end (one query)."""
    wanted = {job.pk: job for job in jobs if settled(job, now)}
    if not wanted:
        return {}
    found = {}
    for job_id, attempt, ended_at, data in EndedGoodput.objects.filter(
            job_id__in=list(wanted)).values_list("job_id", "attempt", "ended_at", "split"):
        job = wanted[job_id]
        if (attempt, ended_at) == (job.attempt, job.ended_at) and data.get("format") == FORMAT:
            found[job_id] = from_data(data)
    return found


def store(splits: Iterable[tuple[Job, calc.Goodput]], now: datetime) -> None:
    """Keep the goodput of the settled jobs among SPLITS (one statement)."""
    rows = [EndedGoodput(job=job, attempt=job.attempt, ended_at=job.ended_at,
                         split=as_data(split), computed_at=now)
            for job, split in splits if settled(job, now)]
    if rows:
        EndedGoodput.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["job"],
            update_fields=["attempt", "ended_at", "split", "computed_at"])


def as_data(split: calc.Goodput) -> dict[str, Any]:
    """SPLIT as JSON (floats round-trip exactly: Python writes their shortest exact form)."""
    return {"format": FORMAT, "billed": split.billed_accelerator_seconds,
            "categories": [[c.name, c.accelerator_seconds, c.billed, c.micros]
                           for c in split.categories],
            "replayed_steps": split.replayed_steps, "step_seconds": split.step_seconds,
            "notes": list(split.notes)}


def from_data(data: dict[str, Any]) -> calc.Goodput:
    return calc.Goodput(
        billed_accelerator_seconds=data["billed"],
        categories=tuple(calc.Category(name, seconds, billed, micros)
                         for name, seconds, billed, micros in data["categories"]),
        replayed_steps=data["replayed_steps"], step_seconds=data["step_seconds"],
        notes=tuple(data["notes"]))
