"""A job's goodput (where its accelerator time went) and a team's per month, from what the
control plane stores: attempts, restarts, step metrics and timeline events.

vertexplan/goodput.py splits the time; this module reads the facts for a batch of jobs in a
fixed handful of queries (a team's month is one batch) and prices the split with the job's
own bill (controlplane/costs/spend.py): each billed category's share of the bill is its share
of the billed time, so the categories' dollars add up to the job's cost on its page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from fractions import Fraction
from typing import Any

from django.utils import timezone

from contract.events import PHASE, PHASES
from controlplane.costs import goodput_cache, spend
from controlplane.logs.models import StepMetric
from controlplane.runs.models import (
    TERMINAL_STATES,
    Job,
    JobAttempt,
    JobEvent,
    JobRestart,
    JobState,
)
from controlplane.teams.models import Team
from vertexplan import goodput as calc
from vertexplan.pricing.money import MICROS_PER_USD
from vertexplan.summaries import pool_summaries

# The timeline events the split reads besides phases: what stands for time without them.
MARKER_KINDS = (*calc.MARKER_KINDS, "resumed")
# How an attempt ended that the work of its last run did not survive.
_DISRUPTED = frozenset({"preemption", "stockout", "application", "timeout", "config", "hang"})


def accelerators(custom_job: dict[str, Any] | None) -> int:
    """The job's accelerators (GPUs or TPU chips as the pools count them); a job without any
    counts its machines, so a CPU job's goodput is in machine-seconds."""
    pools = pool_summaries(custom_job)
    chips = sum(p.replicas * p.accelerator_count for p in pools)
    return chips or sum(p.replicas for p in pools) or 1


@dataclass(frozen=True)
class JobGoodput:
    job: Job
    split: calc.Goodput


def of_jobs(jobs: Sequence[Job], now: datetime | None = None) -> list[JobGoodput]:
    """The goodput of each job: an ended job's as stored once (goodput_cache), the others'
    read together, in six queries whatever their number (and one more to store those that
    ended)."""
    now = now or timezone.now()
    stored = goodput_cache.read(jobs, now)
    fresh = _computed([job for job in jobs if job.pk not in stored], now)
    goodput_cache.store(((found.job, found.split) for found in fresh), now)
    splits = {**stored, **{found.job.pk: found.split for found in fresh}}
    return [JobGoodput(job, splits[job.pk]) for job in jobs]


def _computed(jobs: Sequence[Job], now: datetime) -> list[JobGoodput]:
    """The goodput of each job from its attempts, restarts, steps and events."""
    if not jobs:
        return []
    ids = [job.pk for job in jobs]
    # What the job page read already (its attempts and restarts, prefetched) is not read again.
    attempts: dict[int, list[JobAttempt]] = defaultdict(list)
    unread = [job.pk for job in jobs if not _prefetched(job, "attempts")]
    for job in jobs:
        if _prefetched(job, "attempts"):
            attempts[job.pk] = sorted(job.attempts.all(), key=lambda a: a.number)
    for attempt in JobAttempt.objects.filter(job_id__in=unread).order_by("number") \
            if unread else ():
        attempts[attempt.job_id].append(attempt)
    pending: dict[tuple[int, int], datetime] = {}
    phases: dict[int, list[calc.Phase]] = defaultdict(list)
    markers: dict[int, list[calc.Marker]] = defaultdict(list)
    events = JobEvent.objects.filter(job_id__in=ids, kind__in=("state", PHASE, *MARKER_KINDS))
    for job_id, attempt, kind, at, step, data in events.values_list(
            "job_id", "attempt", "kind", "timestamp", "step", "data").order_by("timestamp", "id"):
        _read_event(job_id, attempt, kind, at, step, data or {}, pending, phases, markers)
    restarts: dict[int, list[calc.Disruption]] = defaultdict(list)
    unread = [job.pk for job in jobs if not _prefetched(job, "restart_records")]
    rows = [(job.pk, r.attempt, r.occurred_at, r.resumed_at, r.resumed_from_step, r.step)
            for job in jobs if _prefetched(job, "restart_records")
            for r in job.restart_records.all()]
    if unread:
        rows += JobRestart.objects.filter(job_id__in=unread).values_list(
            "job_id", "attempt", "occurred_at", "resumed_at", "resumed_from_step", "step")
    for row in rows:
        restarts[row[0]].append(calc.Disruption(*row[1:]))
    steps: dict[int, list[calc.Step]] = defaultdict(list)
    for job_id, attempt, step, at in StepMetric.objects.filter(job_id__in=ids).values_list(
            "job_id", "attempt", "step", "timestamp"):
        steps[job_id].append(calc.Step(attempt, at, step))
    out = []
    for job in jobs:
        timeline = calc.Timeline(
            attempts=[_attempt(job, a, pending.get((job.pk, a.number)))
                      for a in attempts[job.pk]],
            now=now, accelerators=accelerators(job.custom_job),
            disruptions=restarts[job.pk], steps=steps[job.pk], phases=phases[job.pk],
            markers=markers[job.pk])
        split = calc.goodput(timeline)
        out.append(JobGoodput(job, _priced(job, split, now)))
    return out


def _prefetched(job: Job, name: str) -> bool:
    return name in getattr(job, "_prefetched_objects_cache", {})


def of_job(job: Job, now: datetime | None = None) -> calc.Goodput:
    return of_jobs([job], now)[0].split


def _read_event(job_id: int, attempt: int, kind: str, at: datetime, step: int | None,
                data: dict[str, Any], pending: dict[tuple[int, int], datetime],
                phases: dict[int, list[calc.Phase]],
                markers: dict[int, list[calc.Marker]]) -> None:
    if kind == "state":
        if data.get("to") == JobState.PENDING:
            pending.setdefault((job_id, attempt), at)
    elif kind == PHASE:
        seconds = data.get("seconds")
        # Rank 0's (or a line naming no rank): every rank timing the same save counts once.
        if data.get("phase") in PHASES and isinstance(seconds, int | float) \
                and not isinstance(seconds, bool) and data.get("rank") in (None, 0):
            phases[job_id].append(calc.Phase(attempt, at, data["phase"], float(seconds)))
    else:
        seconds = data.get("seconds")
        markers[job_id].append(calc.Marker(
            attempt, at, kind, step,
            float(seconds) if isinstance(seconds, int | float)
            and not isinstance(seconds, bool) else None))


def _attempt(job: Job, attempt: JobAttempt, pending_at: datetime | None) -> calc.Attempt:
    ended = attempt.ended_at
    if ended is None and job.state in TERMINAL_STATES and attempt.number == job.attempt:
        ended = job.ended_at
    # The first attempt waited from the job's creation (the product's own queue, a quota).
    created = min(job.created_at, attempt.created_at) if attempt.number == 1 \
        else attempt.created_at
    return calc.Attempt(
        number=attempt.number, created_at=created, pending_at=pending_at,
        started_at=attempt.started_at, ended_at=ended,
        billed=attempt.failure not in spend.SYSTEM_FAILURES,
        resume_step=attempt.resume_step,
        disrupted=attempt.failure in _DISRUPTED or (
            ended is not None and job.state == JobState.FAILED
            and attempt.number == job.attempt))


def _priced(job: Job, split: calc.Goodput, now: datetime) -> calc.Goodput:
    """The split with each category's share of the job's bill (None when not priced)."""
    if split.billed_accelerator_seconds <= 0:
        return calc.priced(split, 0)
    cost = spend.cost_of(job, now)
    if cost is None:
        return split
    return calc.priced(split, Fraction(cost.billed) / Fraction(split.billed_accelerator_seconds))


# --- persistent resources' idle time ---------------------------------------------------------

@dataclass(frozen=True)
class IdleResource:
    """A persistent resource's idle time in a team's month: up and billing with nothing on it.
    ACCELERATORS as a job's count them (machines where it has none); MICROS what the idle
    seconds cost at its hourly price."""

    name: str
    accelerators: int
    idle_seconds: float
    micros: int

    @property
    def accelerator_seconds(self) -> float:
        return self.idle_seconds * self.accelerators


# Who reports persistent resources' idle time, registered by the app that owns them
# (controlplane/clusters, in its AppConfig.ready): costs may not import clusters. Called with
# the team, the month and the moment the report is made.
IdleSource = Callable[[Team, date, datetime], list[IdleResource]]
_IDLE_SOURCES: dict[str, IdleSource] = {}


def register_idle(name: str, source: IdleSource) -> None:
    _IDLE_SOURCES[name] = source


def idle_resources(team: Team, month: date, now: datetime) -> list[IdleResource]:
    return [found for source in _IDLE_SOURCES.values() for found in source(team, month, now)]


# --- what the API and the pages show -------------------------------------------------------

def usd(micros: int | None) -> float | None:
    return None if micros is None else micros / MICROS_PER_USD


def category_rows(categories: Sequence[calc.Category]) -> list[dict[str, Any]]:
    return [{"name": c.name, "accelerator_seconds": round(c.accelerator_seconds, 3),
             "cost_usd": usd(c.micros), "cost_micros": c.micros, "billed": c.billed}
            for c in categories]


def job_report(job: Job, now: datetime | None = None) -> dict[str, Any]:
    """GET /api/v1/jobs/<id>/goodput/."""
    split = of_job(job, now)
    return {
        "job": job.pk,
        "status": "so far" if job.state not in TERMINAL_STATES else "final",
        "accelerators": accelerators(job.custom_job),
        "billed_accelerator_seconds": round(split.billed_accelerator_seconds, 3),
        "goodput": round(split.fraction, 4) if split.fraction is not None else None,
        "categories": category_rows(split.categories),
        "replayed_steps": split.replayed_steps,
        "step_seconds": split.step_seconds,
        "notes": list(split.notes),
    }


def parse_month(text: str | None) -> date:
    """YYYY-MM -> its first day; the current month (UTC) when not given."""
    if not text:
        return spend.month_start()
    try:
        year, month = (int(part) for part in text.split("-"))
        if len(text) != 7:
            raise ValueError(text)
        return date(year, month, 1)
    except ValueError:
        raise ValueError(f"month must be YYYY-MM (e.g. {spend.month_start():%Y-%m}), "
                         f"got {text[:20]!r}") from None


def team_month(team: Team, month: date, now: datetime | None = None) -> dict[str, Any]:
    """GET /api/v1/teams/<team>/goodput/?month=YYYY-MM: the sum over the team's jobs created
    in the month (as its spend counts them), with its persistent resources' idle time in the
    month as `idle` (their busy time is the jobs'), the top causes of badput, and each job's
    and each idle resource's line."""
    now = now or timezone.now()
    jobs = list(spend._month_jobs(team, month).order_by("created_at", "id"))
    splits = of_jobs(jobs, now)
    idle = idle_resources(team, month, now)
    seconds: dict[str, float] = defaultdict(float)
    micros: dict[str, int] = defaultdict(int)
    priced = True
    for found in splits:
        for c in found.split.categories:
            seconds[c.name] += c.accelerator_seconds
            if c.micros is None:
                priced = False
            else:
                micros[c.name] += c.micros
    for resource in idle:
        seconds["idle"] += resource.accelerator_seconds
        micros["idle"] += resource.micros
    total = [calc.Category(name, seconds[name], name in calc.BILLED,
                           micros[name] if priced else None) for name in calc.CATEGORIES]
    billed = sum(found.split.billed_accelerator_seconds for found in splits) + sum(
        resource.accelerator_seconds for resource in idle)
    return {
        "team": team.slug,
        "month": f"{month:%Y-%m}",
        "jobs": len(jobs),
        "billed_accelerator_seconds": round(billed, 3),
        "goodput": round(seconds[calc.PRODUCTIVE] / billed, 4) if billed > 0 else None,
        "categories": category_rows(total),
        "top_badput": category_rows(calc.top_badput(total)),
        "by_job": [{"job": found.job.pk, "name": found.job.name,
                    "billed_accelerator_seconds": round(found.split.billed_accelerator_seconds, 3),
                    "goodput": round(f, 4) if (f := found.split.fraction) is not None else None}
                   for found in splits],
        "idle_resources": [{"name": r.name, "accelerators": r.accelerators,
                            "idle_seconds": round(r.idle_seconds, 3),
                            "accelerator_seconds": round(r.accelerator_seconds, 3),
                            "cost_usd": usd(r.micros), "cost_micros": r.micros}
                           for r in idle],
    }


# --- the pages -----------------------------------------------------------------------------

def bar(categories: Sequence[dict[str, Any]], billed: float) -> list[dict[str, Any]]:
    """The billed categories that took any time, each with its share of the bill in percent
    and its accelerator-hours (the pages' stacked bar and its table)."""
    if billed <= 0:
        return []
    return [{**c, "pct": round(100 * c["accelerator_seconds"] / billed, 2),
             "hours": c["accelerator_seconds"] / 3600, "label": c["name"].replace("_", " ")}
            for c in categories if c["billed"] and c["accelerator_seconds"] > 0]


def not_billed(categories: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**c, "hours": c["accelerator_seconds"] / 3600, "label": c["name"].replace("_", " ")}
            for c in categories if not c["billed"] and c["accelerator_seconds"] > 0]
