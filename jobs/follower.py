"""Follow Cloud Logging for every running job with one query per sweep.

entries.list allows 60 requests per minute per project (VERTEX_FACTS.md section 5), so the
follower never polls per job: one filter ORs the job ids of every attempt being followed. A
persisted cursor (the newest timestamp stored) with an overlap window catches entries that
arrive late; duplicates from the overlap are dropped by the (job, insertId) unique keys.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from jobs import events
from jobs.backends.base import LogEntry, get_backend
from jobs.models import Job, JobAttempt, JobEvent, LogCursor, LogLine, StepMetric

logger = logging.getLogger(__name__)

# Entries can reach Cloud Logging a little after their timestamp: re-read this much.
OVERLAP = timedelta(seconds=30)
# Keep following an attempt this long after it ended, for its last lines.
TRAILING = timedelta(minutes=2)
MAX_FILTER_CHARS = 20_000
MAX_PAGES_PER_SWEEP = 20
PAGE_SIZE = 1000


def followed_attempts(now: datetime) -> list[JobAttempt]:
    return list(
        JobAttempt.objects.exclude(vertex_job_id="")
        .filter(Q(ended_at__isnull=True) | Q(ended_at__gte=now - TRAILING))
        .select_related("job")
    )


def job_filters(job_ids: Iterable[str], since: datetime) -> list[str]:
    """As few filters as the length limit allows, each covering a share of the jobs."""
    head = f'resource.type="ml_job" AND timestamp>="{_rfc3339(since)}" AND ('
    budget = MAX_FILTER_CHARS - len(head) - 1
    filters: list[str] = []
    clause: list[str] = []
    used = 0
    for job_id in sorted(set(job_ids)):
        term = f'resource.labels.job_id="{job_id}"'
        cost = len(term) + (4 if clause else 0)
        if clause and used + cost > budget:
            filters.append(head + " OR ".join(clause) + ")")
            clause, used = [], 0
            cost = len(term)
        clause.append(term)
        used += cost
    if clause:
        filters.append(head + " OR ".join(clause) + ")")
    return filters


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def follow() -> int:
    """One sweep: read new entries for every followed job and store them. Returns how many."""
    backend = get_backend()
    now = timezone.now()
    attempts = followed_attempts(now)
    if not attempts:
        return 0
    by_vertex_id = {a.vertex_job_id: a for a in attempts}
    cursor = LogCursor.objects.filter(project=backend.project).first()
    earliest = min(a.submitted_at or a.created_at for a in attempts) - OVERLAP
    since = earliest if cursor is None else min(cursor.timestamp - OVERLAP, now)
    newest = cursor.timestamp if cursor else earliest
    stored = 0
    pages = 0
    for filter_ in job_filters(by_vertex_id, since):
        token = ""
        while pages < MAX_PAGES_PER_SWEEP:
            page = backend.list_log_entries(filter_, page_size=PAGE_SIZE, page_token=token)
            pages += 1
            stored += store_entries(page.entries, by_vertex_id)
            for entry in page.entries:
                newest = max(newest, entry.timestamp)
            token = page.next_page_token
            if not token:
                break
    LogCursor.objects.update_or_create(project=backend.project, defaults={"timestamp": newest})
    return stored


def store_entries(entries: list[LogEntry], attempts: dict[str, JobAttempt]) -> int:
    """Store entries as log lines, events and step metrics; already-stored ones are skipped."""
    lines: list[LogLine] = []
    timeline: list[JobEvent] = []
    steps: list[StepMetric] = []
    touched: dict[int, int | None] = {}
    for entry in entries:
        attempt = attempts.get(entry.job_id)
        if attempt is None:
            continue
        parsed = events.parse(entry)
        job_id, number = attempt.job_id, attempt.number
        touched.setdefault(job_id, None)
        lines.append(LogLine(
            job_id=job_id, attempt=number, timestamp=entry.timestamp, severity=entry.severity,
            replica=entry.task_name, message=parsed.message, insert_id=entry.insert_id,
        ))
        if parsed.is_step:
            values = events.step_values(parsed)
            total = parsed.fields.get("total_steps")
            if isinstance(total, int):
                touched[job_id] = total
            steps.append(StepMetric(
                job_id=job_id, attempt=number, step=parsed.step, timestamp=entry.timestamp,
                insert_id=entry.insert_id, **values,
            ))
        elif parsed.is_timeline_event or parsed.event == "replica_restarted":
            timeline.append(JobEvent(
                job_id=job_id, attempt=number, kind=parsed.event, timestamp=entry.timestamp,
                replica=entry.task_name, step=parsed.step, data=parsed.fields,
                insert_id=entry.insert_id,
            ))
    with transaction.atomic():
        LogLine.objects.bulk_create(lines, ignore_conflicts=True, batch_size=1000)
        StepMetric.objects.bulk_create(steps, ignore_conflicts=True, batch_size=1000)
        JobEvent.objects.bulk_create(timeline, ignore_conflicts=True, batch_size=1000)
        for job_id, total_steps in touched.items():
            refresh_progress(job_id, total_steps)
    return len(lines)


def refresh_progress(job_id: int, total_steps: int | None) -> None:
    """Derive a job's progress and restart count from what is stored: idempotent by design."""
    last = StepMetric.objects.filter(job_id=job_id).order_by("-timestamp", "-step").first()
    starts = (JobEvent.objects.filter(job_id=job_id, kind="run_started", replica="workerpool0-0")
              .values("attempt").annotate(n=Count("id")))
    # A replica's log starting over within one attempt is a restart.
    restarts = sum(max(row["n"] - 1, 0) for row in starts)
    update: dict[str, object] = {
        "last_step": last.step if last else None,
        "last_loss": last.loss if last else None,
        "restarts": restarts,
    }
    if total_steps is not None:
        update["total_steps"] = total_steps
    Job.objects.filter(pk=job_id).update(**update)
