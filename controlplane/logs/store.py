"""Log entries into the database: lines, step metrics, timeline events, failures, and each
job's denormalised progress. Idempotent: an entry read twice is stored once (unique keys on
(job, insertId)), so the follower may re-read freely."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Case, Count, F, IntegerField, OuterRef, Subquery, Value, When

from controlplane.logs.bulk import insert_ignoring_duplicates
from controlplane.logs.models import LogFailure, LogLine, StepMetric
from controlplane.runs.models import Job, JobEvent
from vertexplan.logparse import events, failures
from vertexplan.logparse.entries import LogEntry

LINE_COLUMNS = ("job", "attempt", "timestamp", "severity", "replica", "message", "insert_id")
STEP_COLUMNS = ("job", "attempt", "step", "timestamp", "loss", "lr", "tokens_per_s",
                "step_time_s", "span", "insert_id")
# Lines before a batch that may hold the start of a traceback the batch ends.
TRACEBACK_LOOKBACK = 200
# A crash loop prints the same failure again and again: the page needs a few, not thousands.
MAX_FAILURES_PER_KIND = 20
PRIMARY_REPLICA = "workerpool0-0"


@dataclass(frozen=True)
class Target:
    """Where an entry of one CustomJob goes: the job and its attempt number."""

    job_id: int
    attempt: int


@dataclass
class Stored:
    offered: int = 0   # entries given
    lines: int = 0     # log lines new to the database
    steps: int = 0     # step metrics new to the database


@dataclass
class _Rows:
    lines: list[tuple[object, ...]] = field(default_factory=list)
    steps: list[tuple[object, ...]] = field(default_factory=list)
    timeline: list[JobEvent] = field(default_factory=list)
    totals: dict[int, int] = field(default_factory=dict)
    stepped: set[int] = field(default_factory=set)
    started: set[int] = field(default_factory=set)
    # (job, attempt, replica) -> [(entry, message)] of the lines that may report a failure
    scan: dict[tuple[int, int, str], list[tuple[LogEntry, str]]] = field(
        default_factory=lambda: defaultdict(list))


def store_entries(entries: Sequence[LogEntry], targets: Mapping[str, Target]) -> Stored:
    """Store one batch (in timestamp order, as Cloud Logging returns it)."""
    rows = _rows(entries, targets)
    result = Stored(offered=len(entries))
    with transaction.atomic():
        _asynchronous_commit()
        result.lines = insert_ignoring_duplicates(LogLine, LINE_COLUMNS, rows.lines)
        result.steps = insert_ignoring_duplicates(StepMetric, STEP_COLUMNS, rows.steps)
        JobEvent.objects.bulk_create(rows.timeline, ignore_conflicts=True, batch_size=1000)
        _store_failures(rows.scan)
        refresh_progress(rows.stepped, rows.totals, rows.started)
    return result


def _asynchronous_commit() -> None:
    """Commit without waiting for the WAL flush. A database crash may then lose the last
    fraction of a second of pages, but together with the cursor positions that say they are
    stored (same transaction), so the follower reads them again: nothing lost or doubled,
    and the commit stops costing a disk flush per page."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _rows(entries: Sequence[LogEntry], targets: Mapping[str, Target]) -> _Rows:
    rows = _Rows()
    for entry in entries:
        target = targets.get(entry.job_id)
        if target is None:
            continue
        parsed = events.parse(entry)
        job_id, number = target.job_id, target.attempt
        rows.lines.append((job_id, number, entry.timestamp, entry.severity, entry.task_name,
                           parsed.message, entry.insert_id))
        if parsed.scan:
            rows.scan[(job_id, number, entry.task_name)].append((entry, parsed.message))
        if parsed.is_step:
            values = events.step_values(parsed)
            total = parsed.fields.get("total_steps")
            if isinstance(total, int) and total > 0:
                rows.totals[job_id] = total
            rows.stepped.add(job_id)
            rows.steps.append((job_id, number, parsed.step, entry.timestamp, values["loss"],
                               values["lr"], values["tokens_per_s"], values["step_time_s"], 1,
                               entry.insert_id))
        elif parsed.is_timeline_event or parsed.event == "replica_restarted":
            if parsed.event == "run_started":
                rows.started.add(job_id)
            rows.timeline.append(JobEvent(
                job_id=job_id, attempt=number, kind=parsed.event, timestamp=entry.timestamp,
                replica=entry.task_name, step=parsed.step, data=parsed.fields,
                insert_id=entry.insert_id,
            ))
    return rows


def _store_failures(scan: Mapping[tuple[int, int, str], list[tuple[LogEntry, str]]]) -> None:
    found: list[LogFailure] = []
    for (job_id, attempt, replica), lines in scan.items():
        scanner = failures.TracebackScanner()
        first = lines[0][0]
        if failures.is_traceback_continuation(lines[0][1]):
            scanner.prime(_lines_before(job_id, replica, first.timestamp))
        for entry, message in lines:
            failure = scanner.feed(message)
            if failure is not None:
                found.append(LogFailure(
                    job_id=job_id, attempt=attempt, kind=failure.kind,
                    timestamp=entry.timestamp, replica=replica, summary=failure.summary,
                    last_frame=failure.last_frame, insert_id=entry.insert_id))
    if not found:
        return
    jobs = {f.job_id for f in found}
    counts = {(r["job_id"], r["kind"]): r["n"] for r in
              LogFailure.objects.filter(job_id__in=jobs).values("job_id", "kind")
              .annotate(n=Count("id"))}
    kept = []
    for failure in found:
        key = (failure.job_id, failure.kind)
        if counts.get(key, 0) < MAX_FAILURES_PER_KIND:
            counts[key] = counts.get(key, 0) + 1
            kept.append(failure)
    LogFailure.objects.bulk_create(kept, ignore_conflicts=True)


def _lines_before(job_id: int, replica: str, before: datetime) -> list[str]:
    """The replica's preceding warning-or-worse lines, oldest first."""
    messages = (LogLine.objects.filter(job_id=job_id, replica=replica, timestamp__lt=before,
                                       severity__gte=events.FAILURE_MIN_SEVERITY)
                .order_by("-timestamp", "-insert_id")
                .values_list("message", flat=True)[:TRACEBACK_LOOKBACK])
    return list(messages)[::-1]


def refresh_progress(stepped: set[int], totals: Mapping[int, int], started: set[int]) -> None:
    """Derive progress from what is stored, in one statement whatever the number of jobs."""
    if stepped:
        newest = StepMetric.objects.filter(job=OuterRef("pk")).order_by("-timestamp", "-step")
        update: dict[str, Any] = {"last_step": Subquery(newest.values("step")[:1]),
                                  "last_loss": Subquery(newest.values("loss")[:1])}
        if totals:
            update["total_steps"] = Case(
                *[When(pk=job_id, then=Value(total)) for job_id, total in totals.items()],
                default=F("total_steps"), output_field=IntegerField())
        Job.objects.filter(pk__in=stepped).update(**update)
    for job_id in started:
        # A replica's log starting over within one attempt is a restart.
        starts = (JobEvent.objects.filter(job_id=job_id, kind="run_started",
                                          replica=PRIMARY_REPLICA)
                  .values("attempt").annotate(n=Count("id")))
        restarts = sum(max(row["n"] - 1, 0) for row in starts)
        Job.objects.filter(pk=job_id).update(restarts=restarts)
