"""A job's actual cost from its stored facts, kept on the job row, and a team's spend.

vertexplan/pricing/actual.py does the arithmetic; this module reads what it needs (the attempts and
their price snapshots, the preemption records, the checkpoints) in a handful of queries, so the
reconciler can recompute a running job's cost on every sweep and pages can show it live.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Prefetch, Q, QuerySet, Sum
from django.utils import timezone

from controlplane.core import price_table, row_updates
from controlplane.runs import recovery
from controlplane.runs.models import (
    ACTIVE_STATES,
    Job,
    JobAttempt,
    JobEvent,
    JobKind,
    JobRestart,
    RestartCause,
    job_documents_except,
)
from controlplane.teams.models import Team
from vertexplan.pricing import PricingError
from vertexplan.pricing.actual import (
    AttemptFacts,
    JobCost,
    PreemptionFacts,
    job_cost,
    rate_of,
    replica_pool,
)
from vertexplan.pricing.snapshot import SnapshotError, restore
from vertexplan.pricing.table import cited_now

logger = logging.getLogger(__name__)

MICROSECOND = timedelta(microseconds=1)

# Failures of the platform, not of the user's job: Vertex does not bill the attempt.
SYSTEM_FAILURES = frozenset({recovery.Failure.STOCKOUT, recovery.Failure.PREEMPTION})


def pool_replicas(custom_job: dict[str, Any]) -> dict[int, int]:
    """Replica count of each worker pool (Vertex reads a missing count as 0)."""
    pools = (custom_job.get("jobSpec") or {}).get("workerPoolSpecs") or []
    out: dict[int, int] = {}
    for index, pool in enumerate(pools):
        try:
            out[index] = int((pool or {}).get("replicaCount") or 0)
        except (TypeError, ValueError):
            out[index] = 0
    return out


def _attempt_facts(job: Job, attempt: JobAttempt) -> AttemptFacts | None:
    data = attempt.price_snapshot or job.price_snapshot
    if not data:
        return None
    try:
        estimate = restore(data)
    except SnapshotError:
        logger.warning("job %s attempt %s: unreadable price snapshot", job.pk, attempt.number)
        return None
    return AttemptFacts(
        number=attempt.number, estimate=estimate,
        rate=rate_of(attempt.scheduling or estimate.strategy),
        started_at=attempt.started_at, ended_at=attempt.ended_at,
        system_failure=attempt.failure in SYSTEM_FAILURES,
    )


_BILLED_RESTARTS = (RestartCause.PREEMPTION, RestartCause.STOCKOUT)


def _preemptions(job: Job) -> list[PreemptionFacts]:
    rows = list(JobRestart.objects.filter(job=job, cause__in=_BILLED_RESTARTS)
                .select_related("checkpoint"))
    if not rows:  # most jobs: no second query
        return []
    saves = sorted((e.attempt, e.timestamp) for e in JobEvent.objects.filter(
        job=job, kind="checkpoint_saved").only("attempt", "timestamp"))
    return _preemption_facts(rows, saves)


def _preemption_facts(rows: list[JobRestart], saves: list[tuple[int, datetime]]
                      ) -> list[PreemptionFacts]:
    """A job's preemption records, with its checkpoint saves (attempt, time) in order."""
    out = []
    for row in rows:
        if replica_pool(row.replica) is None:
            continue
        if row.checkpoint_id is not None and row.checkpoint is not None:
            preserved = row.checkpoint.timestamp
        else:
            # Not resumed yet: the newest checkpoint written before the preemption.
            before = [at for _, at in saves if at <= row.occurred_at]
            preserved = before[-1] if before else None
        out.append(PreemptionFacts(attempt=row.attempt, replica=row.replica,
                                   occurred_at=row.occurred_at, resumed_at=row.resumed_at,
                                   preserved_at=preserved))
    return out


def cost_of(job: Job, now: datetime | None = None,
            preemptions: list[PreemptionFacts] | None = None) -> JobCost | None:
    """The job's billed cost so far (final once it has ended); None without a snapshot.
    PREEMPTIONS: its preemption facts where the caller read them (refresh_together)."""
    attempts = [f for a in job.attempts.all() if (f := _attempt_facts(job, a)) is not None]
    if not attempts:
        return None
    if preemptions is None:
        preemptions = _preemptions(job)
    return job_cost(attempts, preemptions, pool_replicas(job.custom_job), now or timezone.now())


def refresh(job_id: int) -> JobCost | None:
    """Recompute and store the job's cost (idempotent).

    The job's row is locked while its attempts are read and the figure written: the budget
    check and the reconciler both refresh, and without the lock one that read an attempt as
    still running could write after the one that saw it end, leaving a stored cost that
    disagrees with the job page's for good."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if not job.on_job_path:
            return None  # a trial's or Ray job's money is its sweep's or cluster's
        now = timezone.now()
        cost = cost_of(job, now)
        if cost is None:
            return None
        Job.objects.filter(pk=job_id).update(cost_micros=cost.billed, lost_micros=cost.lost,
                                             cost_updated_at=now)
    return cost


def refresh_together(job_ids: list[int]) -> None:
    """refresh() of every job in JOB_IDS in a few queries for them all (a reconcile sweep's
    page): their rows locked together (in id order, as any other locker of several), their
    attempts, preemption records and checkpoint saves read in one query each, the figures
    written in one. A job whose facts cannot be priced is refreshed alone, as refresh_many
    does, so it never holds up the others."""
    with transaction.atomic():
        # FOR NO KEY UPDATE: the page holds up the jobs' other changes, not their log lines
        # and events (their foreign keys' checks), which the log store writes meanwhile.
        jobs = list(Job.objects.select_for_update(no_key=True).filter(pk__in=job_ids,
                                                                      kind=JobKind.JOB)
                    .defer(*job_documents_except("custom_job", "price_snapshot"))
                    .order_by("pk").prefetch_related(Prefetch(
                        "attempts", queryset=JobAttempt.objects.defer("submitted_spec"))))
        rows: dict[int, list[JobRestart]] = {}
        for row in JobRestart.objects.filter(job_id__in=[j.pk for j in jobs],
                                             cause__in=_BILLED_RESTARTS
                                             ).select_related("checkpoint"):
            rows.setdefault(row.job_id, []).append(row)
        saves: dict[int, list[tuple[int, datetime]]] = {}
        for job_id, attempt, at in JobEvent.objects.filter(
                job_id__in=list(rows), kind="checkpoint_saved").values_list(
                "job_id", "attempt", "timestamp"):
            saves.setdefault(job_id, []).append((attempt, at))
        now = timezone.now()
        priced, alone = [], []
        for job in jobs:
            try:
                cost = cost_of(job, now, _preemption_facts(
                    rows.get(job.pk, []), sorted(saves.get(job.pk, []))))
            except (PricingError, SnapshotError):
                alone.append(job.pk)
                continue
            if cost is not None:
                job.cost_micros, job.lost_micros, job.cost_updated_at = \
                    cost.billed, cost.lost, now
                priced.append(job)
        row_updates.update_fields(priced, ["cost_micros", "lost_micros", "cost_updated_at"])
    refresh_many(alone)


def refresh_many(job_ids: Iterable[int]) -> None:
    for job_id in job_ids:
        try:
            refresh(job_id)
        except (PricingError, SnapshotError, Job.DoesNotExist):
            logger.exception("cost of job %s", job_id)


# --- a team's month ---------------------------------------------------------------------

def month_start(at: datetime | None = None) -> date:
    """The first day of the (UTC) month of ``at``."""
    at = (at or timezone.now()).astimezone(UTC)
    return date(at.year, at.month, 1)


def _month_jobs(team: Team, month: date) -> QuerySet[Job]:
    """A job's cost counts in the month it was created (UTC). Trials and Ray jobs count
    through their sweep and cluster (register_spend), never as jobs."""
    return Job.objects.filter(team=team, kind=JobKind.JOB, created_at__year=month.year,
                              created_at__month=month.month)


# Other things a team pays for (a cluster bills while it exists, a sweep's trials as they
# run), registered by the apps that own them (AppConfig.ready), since costs may not import
# them: each gives the team's micro-dollars billed in the month and, where it differs, what
# the month is committed to (billed plus what running ones reserve).
OtherSpend = Callable[[Team, date], int]
_OTHER_SPEND: dict[str, OtherSpend] = {}
_OTHER_COMMITTED: dict[str, OtherSpend] = {}


def register_spend(name: str, source: OtherSpend, committed: OtherSpend | None = None) -> None:
    _OTHER_SPEND[name] = source
    _OTHER_COMMITTED[name] = committed or source


@dataclass(frozen=True)
class SpendPart:
    """One thing's part of a month's spend for the charts: NAME (its series), KIND (the
    accelerator series it adds to) and its micro-dollars by UTC day ("YYYY-MM-DD")."""

    name: str
    kind: str
    days: dict[str, int]


# The same things, by day (the costs page's charts): each gives its parts of the team's month,
# adding up to what its register_spend source counts, so the charts' total is the month's
# spend. Called with the month and the moment the chart is drawn at.
SpendSeries = Callable[[Team, date, datetime], list[SpendPart]]
_OTHER_SERIES: dict[str, SpendSeries] = {}


def register_spend_series(name: str, source: SpendSeries) -> None:
    _OTHER_SERIES[name] = source


def other_series(team: Team, month: date, now: datetime) -> list[SpendPart]:
    return [part for source in _OTHER_SERIES.values() for part in source(team, month, now)]


def spread_by_day(cost: int, start: datetime | None, end: datetime | None,
                  fallback: datetime) -> dict[str, int]:
    """COST spread over the UTC days from START to END in proportion to the time on each, in
    whole micro-dollars that add up to COST exactly; without a span, all on FALLBACK's day."""
    if start is None or end is None or end <= start:
        return {fallback.astimezone(UTC).date().isoformat(): cost}
    start = start.astimezone(UTC)
    total = (end - start) // MICROSECOND
    out: dict[str, int] = {}
    edge, given = start, 0
    while edge < end:
        cut = min(datetime.combine(edge.date() + timedelta(days=1), time.min, tzinfo=UTC), end)
        # The cost up to CUT, less what earlier days took: integer, so nothing is lost.
        upto = cost * ((cut - start) // MICROSECOND) // total
        out[edge.date().isoformat()] = upto - given
        edge, given = cut, upto
    return out


def other_spend(team: Team, month: date) -> int:
    return sum(source(team, month) for source in _OTHER_SPEND.values())


def other_committed(team: Team, month: date) -> int:
    return sum(source(team, month) for source in _OTHER_COMMITTED.values())


def month_spent(team: Team, month: date | None = None) -> int:
    """Micro-dollars billed this month by the team's jobs, as last stored, and by what else it
    runs (clusters)."""
    month = month or month_start()
    jobs = int(_month_jobs(team, month).aggregate(s=Sum("cost_micros"))["s"] or 0)
    return jobs + other_spend(team, month)


def month_committed(team: Team, month: date | None = None) -> int:
    """What the month has spent plus what its running jobs may still spend: an active job
    reserves its whole estimate (or its bill so far, if that is more)."""
    month = month or month_start()
    jobs = _month_jobs(team, month)
    ended = jobs.filter(~Q(state__in=ACTIVE_STATES)).aggregate(s=Sum("cost_micros"))["s"] or 0
    active = sum(max(cost, estimate or 0) for cost, estimate in jobs.filter(
        state__in=ACTIVE_STATES).values_list("cost_micros", "estimate_micros"))
    return int(ended + active) + other_committed(team, month)


def _price_source(job: Job) -> str | None:
    source = (job.price_snapshot or {}).get("table", {}).get("source")
    # A snapshot stored before the shipped table moved cites the path it had then.
    return cited_now(source) if isinstance(source, str) else source


def submitted_hourly_micros(job: Job) -> int | None:
    """What an hour of the job costs at the rate it was submitted at (on demand where that rate
    has no figure), from the price snapshot it stored; None without a readable one.

    The job's ``estimate_micros`` is this for its whole timeout: the most it can cost, what a
    budget reserves, never what it is expected to cost, so pages show this rate beside it."""
    snapshot = job.price_snapshot if isinstance(job.price_snapshot, dict) else {}
    hourly = snapshot.get("hourly")
    if not isinstance(hourly, dict):
        return None
    for rate in (snapshot.get("rate"), "on_demand"):
        value = hourly.get(rate) if isinstance(rate, str) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def cost_report(job: Job, now: datetime | None = None) -> dict[str, Any]:
    """The job's cost for its page and its API: billed so far or final, lost to preemptions,
    useful, the estimate it was submitted with, and the breakdown, in micro-dollars."""
    cost = cost_of(job, now)
    ended = job.state not in ACTIVE_STATES
    body: dict[str, Any] = {
        "money": "integer micro-dollars (1 USD = 1000000)",
        "status": "final" if ended else "so far",
        "estimate_micros": job.estimate_micros,
        "estimate_hours": str(job.estimate_hours) if job.estimate_hours is not None else None,
        "price_retrieved": price_table.snapshot_date(job.price_snapshot),
        "price_source": _price_source(job),
    }
    if cost is None:
        return {**body, "billed_micros": None, "lost_micros": None, "useful_micros": None,
                "breakdown": None}
    return {**body, "billed_micros": cost.billed, "lost_micros": cost.lost,
            "useful_micros": cost.useful, "breakdown": cost.as_dict()}


def cost_so_far_micros(job: Job) -> int | None:
    """The progress bar's figure (registered with controlplane/runs/panels.py)."""
    cost = cost_of(job)
    return cost.billed if cost is not None else None
