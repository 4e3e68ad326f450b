"""Keep job logs within each team's retention, and long runs' metrics small.

- Log lines older than the team's `days` are deleted. On PostgreSQL a whole week of lines
  (a partition, controlplane/logs/partitions.py) is dropped once the longest window of any
  team has passed it; rows are deleted one by one only where a team keeps less than that.
- A job keeps at most `max_lines_per_job` lines: the oldest beyond that are deleted.
- An attempt with more than `metric_points` step rows is downsampled: its newest half of the
  points stay as they are, older steps are merged in consecutive buckets into one row each
  (the mean of their values, weighted by the steps each row already stands for; the bucket's
  last step, timestamp and insertId; `span` = how many steps it stands for).

Nothing the follower can still read is touched (SAFETY): a deleted row it read again would
come back. Deletes go in batches so no statement holds locks for long.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from controlplane.logs import partitions
from controlplane.logs.models import LogLine, LogRetention, StepMetric
from controlplane.logs.options import RetentionConfig, retention_config
from controlplane.runs.models import ACTIVE_STATES, Job
from controlplane.teams.models import Team

logger = logging.getLogger(__name__)

# Far beyond the follower's reach (its settle lag is about a minute).
SAFETY = timedelta(hours=1)
BATCH = 20_000
VALUES = ("loss", "lr", "tokens_per_s", "step_time_s")


@dataclass(frozen=True)
class Policy:
    days: int
    max_lines_per_job: int
    metric_points: int


@dataclass
class Report:
    lines_deleted: int = 0
    weeks_dropped: int = 0
    steps_merged: int = 0
    jobs_capped: int = 0
    attempts_downsampled: int = 0


def policy_for(team: Team, defaults: RetentionConfig) -> Policy:
    row = LogRetention.objects.filter(team=team).first()
    return Policy(
        days=(row.days if row and row.days else defaults.days),
        max_lines_per_job=(row.max_lines_per_job if row and row.max_lines_per_job
                           else defaults.max_lines_per_job),
        metric_points=(row.metric_points if row and row.metric_points
                       else defaults.metric_points),
    )


def apply(now: datetime | None = None) -> Report:
    """One pass over every team. Idempotent; the beat runs it hourly."""
    now = now or timezone.now()
    defaults = retention_config()
    report = Report()
    teams = list(Team.objects.all())
    policies = {team.pk: policy_for(team, defaults) for team in teams}
    longest = max((p.days for p in policies.values()), default=defaults.days)
    report.weeks_dropped = len(partitions.drop_before(now - timedelta(days=longest) - SAFETY))
    partitions.ensure(now)
    kept = partitions.weeks()
    for team in teams:
        policy = policies[team.pk]
        before = now - timedelta(days=policy.days)
        if kept and policy.days == longest:
            # Its weeks go whole, by the drop above, once the window has passed all of a
            # week (a line is kept up to a week beyond it); rows are deleted only outside
            # the weeks (the DEFAULT partition).
            before = min(before, kept[0].begins)
        report.lines_deleted += _delete_old(team, before)
        for job in _recent_jobs(team, now):
            deleted = cap_lines(job, policy.max_lines_per_job, now)
            report.lines_deleted += deleted
            report.jobs_capped += bool(deleted)
            attempts = (StepMetric.objects.filter(job=job).order_by("attempt")
                        .values_list("attempt", flat=True).distinct())
            for attempt in attempts:
                merged = downsample(job, attempt, policy.metric_points, now)
                report.steps_merged += merged
                report.attempts_downsampled += bool(merged)
    logger.info("log retention: %s", report)
    return report


def _recent_jobs(team: Team, now: datetime) -> list[Job]:
    """Jobs that can have grown since the last pass: running, or ended in the last two days
    (a job that ended earlier was capped when it ended)."""
    return list(Job.objects.filter(team=team).filter(
        Q(state__in=ACTIVE_STATES) | Q(ended_at__gte=now - timedelta(days=2))))


def _delete_batches(lines: QuerySet[LogLine]) -> int:
    deleted = 0
    while True:
        ids = list(lines.values_list("pk", flat=True)[:BATCH])
        if not ids:
            return deleted
        deleted += LogLine.objects.filter(pk__in=ids).delete()[0]


def _delete_old(team: Team, before: datetime) -> int:
    return _delete_batches(LogLine.objects.filter(job__team=team, timestamp__lt=before))


def cap_lines(job: Job, limit: int, now: datetime) -> int:
    """Delete the job's oldest lines beyond `limit` (none the follower can still read)."""
    lines = LogLine.objects.filter(job=job)
    boundary = (lines.order_by("-timestamp", "-insert_id")
                .values_list("timestamp", "insert_id")[limit:limit + 1])
    if not boundary:
        return 0
    at, insert_id = boundary[0]
    at = min(at, now - SAFETY)
    older = lines.filter(Q(timestamp__lt=at) | Q(timestamp=at, insert_id__lte=insert_id))
    return _delete_batches(older)


def _merged_extra(rows: list[tuple[object, int]]) -> dict[str, float] | None:
    """The other numbers of merged rows: each name's mean weighted by span, over the rows that
    have it (as the columns are merged)."""
    sums: dict[str, list[float]] = {}
    for extra, span in rows:
        if not isinstance(extra, dict):
            continue
        for name, value in extra.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total = sums.setdefault(name, [0.0, 0.0])
                total[0] += value * span
                total[1] += span
    return {name: s / w for name, (s, w) in sums.items() if w} or None


def downsample(job: Job, attempt: int, points: int, now: datetime) -> int:
    """Merge an attempt's older step rows so it keeps about `points` of them. Returns how
    many rows were merged away."""
    rows = StepMetric.objects.filter(job=job, attempt=attempt)
    total = rows.count()
    if total <= points:
        return 0
    keep_raw = points // 2
    old = list(rows.filter(timestamp__lt=now - SAFETY).order_by("step", "timestamp")
               .values_list("pk", "span", *VALUES, "extra")[: total - keep_raw])
    size = -(-len(old) // max(points - keep_raw, 1))
    if size < 2:
        return 0
    survivors: list[StepMetric] = []
    doomed: list[int] = []
    for start in range(0, len(old), size):
        bucket = old[start:start + size]
        if len(bucket) < 2:
            continue
        last = bucket[-1]
        merged = StepMetric(pk=last[0], span=sum(r[1] for r in bucket))
        for n, name in enumerate(VALUES, start=2):
            weighted = [(r[n], r[1]) for r in bucket if r[n] is not None]
            weight = sum(w for _, w in weighted)
            setattr(merged, name, sum(v * w for v, w in weighted) / weight if weight else None)
        merged.extra = _merged_extra([(r[-1], r[1]) for r in bucket])
        survivors.append(merged)
        doomed += [r[0] for r in bucket[:-1]]
    with transaction.atomic():
        StepMetric.objects.bulk_update(survivors, ["span", *VALUES, "extra"], batch_size=1000)
        for start in range(0, len(doomed), BATCH):
            StepMetric.objects.filter(pk__in=doomed[start:start + BATCH]).delete()
    return len(doomed)
