"""Preemptions and restarts, detected from every signal the logs and the backend give.

Signals, all read from what the follower stored (JobEvent, LogLine) and from the attempt's end:
  preempted            the trainer's own event: signal, step, emergency checkpoint
  preemption_notice    a log line saying SIGTERM or preempted (the emulator's and Vertex's
                       "Spot VM preempted", a replica's "was preempted, exit code 143"); copied
                       here into JobEvents, so detection reads one small table
  replica_restarted    "Restarting replica ..." (Vertex's and the emulator's restarts): a new run
  run_started          a replica's log starting over: a new run, even with no restart line
  resumed              the step and checkpoint the new run resumed from
  stockout             the attempt ended FAILED with a STOCKOUT (code 8)

Each replica's events of one attempt are cut into runs; every run that ended and started over
(or that has been told it is being preempted) becomes one JobRestart row, keyed by (attempt,
replica, run number), so running detection again updates rows instead of adding them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, OuterRef, Q, Subquery

from contract.events import CHECKPOINT_SAVED, PREEMPTED, REPLICA_RESTARTED, RESUMED, RUN_STARTED
from controlplane.core import preemption_lines, row_updates, signals
from controlplane.logs.models import LogLine, StepMetric
from controlplane.runs.models import (
    Job,
    JobAttempt,
    JobEvent,
    JobRestart,
    RestartCause,
    job_documents_except,
)

logger = logging.getLogger(__name__)

PRIMARY = "workerpool0-0"
NOTICE = "preemption_notice"
SIGNAL_KINDS = (RUN_STARTED, REPLICA_RESTARTED, PREEMPTED, RESUMED, NOTICE)
# Lines reach storage a little late (the follower re-reads a 30 s overlap): scan back this far.
LINE_OVERLAP = timedelta(seconds=60)


@dataclass
class Run:
    """One run of one replica: from its (re)start to the next."""

    marker: JobEvent | None = None          # the "Restarting replica" line that began it
    started: JobEvent | None = None         # its run_started event
    resumed: JobEvent | None = None
    signals: list[JobEvent] = field(default_factory=list)
    ranks: set[Any] = field(default_factory=set)  # of the run_started events seen

    @property
    def start_time(self) -> datetime | None:
        first = self.marker or self.started
        return first.timestamp if first else None


def refresh(job_id: int, *, force: bool = False) -> int:
    """Bring the job's restart records up to date; returns its restart count. Idempotent."""
    job = Job.objects.get(pk=job_id)
    _copy_notices(job)
    newest = job.events.filter(kind__in=SIGNAL_KINDS).aggregate(m=Max("pk"))["m"] or 0
    attempts = list(job.attempts.order_by("number"))
    fingerprint = _fingerprint(newest, attempts)
    if not force and fingerprint == job.restart_scan:
        return job.restarts
    events = list(job.events.filter(kind__in=(*SIGNAL_KINDS, "state", CHECKPOINT_SAVED))
                  .order_by("timestamp", "pk"))
    wanted = detect(job, attempts, events)
    saved = [_save(job, row) for row in wanted]
    count = sum(1 for r in saved if r.replica == PRIMARY)
    Job.objects.filter(pk=job.pk).update(restarts=count, restart_scan=fingerprint)
    return count


def _fingerprint(newest_signal: int, attempts: list[JobAttempt]) -> str:
    """What detection reads, in brief: unchanged, the records it would write are too."""
    return (f"{newest_signal}:{len(attempts)}:{sum(1 for a in attempts if a.started_at)}:"
            f"{sum(1 for a in attempts if a.ended_at)}")


def refresh_many(job_ids: list[int]) -> None:
    """refresh(force=False) of every job in JOB_IDS, in a few queries for them all where
    nothing changed (most jobs of a reconcile sweep: no new signal, no new attempt) and
    refresh() itself for each of the others."""
    newest_line = (LogLine.objects.filter(job_id=OuterRef("pk")).order_by("-timestamp")
                   .values("timestamp")[:1])
    newest_signal = (JobEvent.objects.filter(job_id=OuterRef("pk"), kind__in=SIGNAL_KINDS)
                     .order_by("-pk").values("pk")[:1])
    jobs = list(Job.objects.filter(pk__in=job_ids).defer(*job_documents_except())
                .annotate(newest_line=Subquery(newest_line),
                          newest_signal=Subquery(newest_signal)))
    attempts: dict[int, list[JobAttempt]] = {}
    for attempt in JobAttempt.objects.filter(job_id__in=job_ids).order_by("job_id", "number"):
        attempts.setdefault(attempt.job_id, []).append(attempt)
    noticed = _copy_notices_of(jobs)
    moved = {job.pk: fingerprint for job in jobs if job.pk not in noticed and (
        fingerprint := _fingerprint(job.newest_signal or 0, attempts.get(job.pk, [])))
        != job.restart_scan}
    # A new attempt, or one that started or ended (a fleet's start: every job at once): its
    # events read for all of them together; a job they call restart records for, or with a
    # new notice, is refreshed whole.
    events: dict[int, list[JobEvent]] = {}
    for event in JobEvent.objects.filter(job_id__in=list(moved), kind__in=(
            *SIGNAL_KINDS, "state", CHECKPOINT_SAVED)).order_by("job_id", "timestamp", "pk"):
        events.setdefault(event.job_id, []).append(event)
    scanned = []
    for job in jobs:
        if job.pk in moved and not detect(job, attempts.get(job.pk, []),
                                          events.get(job.pk, [])):
            job.restarts, job.restart_scan = 0, moved[job.pk]
            scanned.append(job)
        elif job.pk in noticed or job.pk in moved:
            refresh(job.pk)
    row_updates.update_fields(scanned, ["restarts", "restart_scan"])


def _copy_notices_of(jobs: list[Job]) -> set[int]:
    """_copy_notices of many jobs (annotated with their newest line's time) in one read of
    their new lines; returns the jobs that got a new notice."""
    due = [job for job in jobs if job.newest_line is not None and (
        job.notices_scanned_to is None or job.newest_line > job.notices_scanned_to)]
    if not due:
        return set()
    since = Q()
    for job in due:
        since |= Q(job_id=job.pk) if job.notices_scanned_to is None else Q(
            job_id=job.pk, timestamp__gte=job.notices_scanned_to - LINE_OVERLAP)
    lines = LogLine.objects.filter(since, message__iregex=preemption_lines.CANDIDATE)
    found = [
        JobEvent(job_id=line.job_id, attempt=line.attempt, kind=NOTICE,
                 timestamp=line.timestamp, replica=line.replica,
                 data={"text": line.message[:500]}, insert_id=line.insert_id)
        for line in lines
        if preemption_lines.says_preempted(line.message)
        and not line.message.lstrip().startswith("Restarting replica")
    ]
    # Rows that existed already are not returned by ignore_conflicts: every job with a notice
    # among its new lines is refreshed whole (refresh() is idempotent).
    JobEvent.objects.bulk_create(found, ignore_conflicts=True)
    for job in due:
        job.notices_scanned_to = job.newest_line
    row_updates.update_fields(due, ["notices_scanned_to"])
    return {event.job_id for event in found}


def _copy_notices(job: Job) -> None:
    """Copy new SIGTERM / preempted log lines into JobEvents (idempotent by insert id)."""
    since = job.notices_scanned_to
    lines = LogLine.objects.filter(job_id=job.pk)
    newest = lines.order_by("-timestamp").values_list("timestamp", flat=True).first()
    if newest is None or (since is not None and newest <= since):
        return
    if since is not None:
        lines = lines.filter(timestamp__gte=since - LINE_OVERLAP)
    found = [
        JobEvent(job_id=job.pk, attempt=line.attempt, kind=NOTICE, timestamp=line.timestamp,
                 replica=line.replica, data={"text": line.message[:500]},
                 insert_id=line.insert_id)
        for line in lines.filter(message__iregex=preemption_lines.CANDIDATE)
        if preemption_lines.says_preempted(line.message)
        and not line.message.lstrip().startswith("Restarting replica")
    ]
    JobEvent.objects.bulk_create(found, ignore_conflicts=True)
    Job.objects.filter(pk=job.pk).update(notices_scanned_to=newest)


# --- cutting events into runs ----------------------------------------------------------------

def _runs(events: list[JobEvent], replica: str) -> list[Run]:
    runs = [Run()]
    for event in events:
        if event.replica not in (replica, ""):
            continue
        kind = event.kind
        if kind == REPLICA_RESTARTED and event.replica == replica:
            runs.append(Run(marker=event))
        elif kind == RUN_STARTED and event.replica == replica:
            rank = (event.data or {}).get("rank")
            if runs[-1].started is None:
                runs[-1].started = event
                runs[-1].ranks.add(rank)
            elif rank is not None and rank not in runs[-1].ranks:
                # A replica with several GPUs runs a process per GPU: each one's run_started
                # belongs to the same run of the replica.
                runs[-1].ranks.add(rank)
            else:  # the log started over with no restart line: a restart all the same
                runs.append(Run(started=event, ranks={rank}))
        elif kind in (PREEMPTED, NOTICE):
            runs[-1].signals.append(event)
        elif kind == RESUMED and event.replica == replica and runs[-1].resumed is None:
            runs[-1].resumed = event
    return runs


def _replicas(events: list[JobEvent]) -> list[str]:
    names = {e.replica for e in events if e.replica and e.kind in SIGNAL_KINDS}
    return sorted(names | {PRIMARY})


def _quiet_after(events: list[JobEvent], attempt: JobAttempt) -> datetime | None:
    """When the control plane asked to cancel the attempt: SIGTERMs after it are not
    preemptions."""
    for event in events:
        if event.kind == "state" and event.attempt == attempt.number and \
                event.data.get("to") == "CANCELLING":
            return event.timestamp
    return None


@dataclass
class Wanted:
    attempt: int
    replica: str
    ordinal: int
    fields: dict[str, Any]


def detect(job: Job, attempts: list[JobAttempt], events: list[JobEvent]) -> list[Wanted]:
    """The restart records the job's events call for (pure apart from step look-ups)."""
    by_attempt: dict[int, list[JobEvent]] = {}
    for event in events:
        by_attempt.setdefault(event.attempt, []).append(event)
    checkpoints = [e for e in events if e.kind == CHECKPOINT_SAVED]
    wanted: list[Wanted] = []
    for index, attempt in enumerate(attempts):
        mine = by_attempt.get(attempt.number, [])
        following = attempts[index + 1] if index + 1 < len(attempts) else None
        quiet = _quiet_after(events, attempt)
        for replica in _replicas(mine):
            runs = _runs([e for e in mine if quiet is None or e.timestamp < quiet
                          or e.kind not in (PREEMPTED, NOTICE)], replica)
            for number, run in enumerate(runs, start=1):
                last = number == len(runs)
                nxt = runs[number] if not last else _first_run_of(following, by_attempt,
                                                                  replica)
                fields = _describe(job, attempt, replica, run, nxt, last=last,
                                   next_attempt=following if last else None,
                                   checkpoints=checkpoints)
                if fields is not None:
                    wanted.append(Wanted(attempt.number, replica, number, fields))
    return wanted


def _first_run_of(attempt: JobAttempt | None, by_attempt: dict[int, list[JobEvent]],
                  replica: str) -> Run | None:
    if attempt is None:
        return None
    runs = _runs(by_attempt.get(attempt.number, []), replica)
    return runs[0]


def _describe(job: Job, attempt: JobAttempt, replica: str, run: Run, nxt: Run | None, *,
              last: bool, next_attempt: JobAttempt | None,
              checkpoints: list[JobEvent]) -> dict[str, Any] | None:
    """The record of one run that ended, or None when it has not ended abnormally."""
    preempted = [s for s in run.signals if s.kind == PREEMPTED and s.replica == replica]
    notices = [s for s in run.signals if s.kind == NOTICE]
    marker_text = (nxt.marker.data.get("text", "") if nxt and nxt.marker else "") or ""
    stockout = last and attempt.failure == "stockout"
    if not _ended_abnormally(attempt, last=last, stockout=stockout,
                             signalled=bool(preempted or notices)):
        return None
    signal = _signal_text(preempted, notices, marker_text, attempt if stockout else None)
    step, checkpoint_path = _stopped_at(job, attempt, run, nxt, preempted)
    resumed_step, resumed_path = _resumed_from(nxt)
    return {
        "cause": _cause(preempted, notices, marker_text, stockout=stockout),
        "signal": signal[:200], "occurred_at": _occurred_at(attempt, run, nxt), "step": step,
        "checkpoint_path": checkpoint_path, "resumed_at": _resumed_at(nxt, next_attempt),
        "resumed_from_step": resumed_step, "resumed_from_path": resumed_path,
        "checkpoint": _checkpoint_event(checkpoints, resumed_step, resumed_path),
        "steps_lost": _steps_lost(step, resumed_step, nxt),
        "sources": _sources(preempted, notices, nxt, stockout=stockout),
    }


def _ended_abnormally(attempt: JobAttempt, *, last: bool, stockout: bool,
                      signalled: bool) -> bool:
    """Whether a run ended in a restart (or a preemption or stockout) worth a record. An
    earlier run of the attempt did, since a later one started; the last one only when it was
    told to stop (signalled) or its attempt ran out of capacity."""
    if last and not stockout and not signalled:
        return False  # still running, or ended without a restart
    # Replicas are stopped with SIGTERM when a job ends: not a preemption.
    return not (last and attempt.failure in ("", "cancelled") and attempt.vertex_state in (
        "JOB_STATE_SUCCEEDED", "JOB_STATE_CANCELLED"))


def _sources(preempted: list[JobEvent], notices: list[JobEvent], nxt: Run | None, *,
             stockout: bool) -> list[str]:
    """Which signals told of the restart, for the record."""
    sources: list[str] = []
    if preempted:
        sources.append("preempted")
    if notices:
        sources.append("sigterm_line")
    if nxt and nxt.marker:
        sources.append("replica_restarted")
    if nxt and nxt.started and not nxt.marker:
        sources.append("log_started_over")
    if stockout:
        sources.append("stockout")
    return sources


def _cause(preempted: list[JobEvent], notices: list[JobEvent], marker_text: str, *,
           stockout: bool) -> str:
    if "emulator restarted" in marker_text or "backend restarted" in marker_text:
        return RestartCause.BACKEND
    if preempted or notices or "preempt" in marker_text.lower():
        return RestartCause.PREEMPTION
    if stockout:
        return RestartCause.STOCKOUT
    if "exit code" in marker_text or "exited" in marker_text:
        return RestartCause.CRASH
    return RestartCause.UNKNOWN


def _occurred_at(attempt: JobAttempt, run: Run, nxt: Run | None) -> datetime:
    """The first signal of the end, else when the next run began, else the attempt's times."""
    first_signal = min((s.timestamp for s in run.signals), default=None)
    if first_signal is None and nxt is not None:
        first_signal = nxt.start_time
    return first_signal or attempt.ended_at or attempt.started_at or attempt.created_at


def _stopped_at(job: Job, attempt: JobAttempt, run: Run, nxt: Run | None,
                preempted: list[JobEvent]) -> tuple[int | None, str]:
    """(step, emergency checkpoint path) the run stopped at: what the trainer said when it was
    preempted, else the last step it logged."""
    step, checkpoint_path = None, ""
    if preempted:
        step = preempted[-1].step
        checkpoint_path = preempted[-1].data.get("checkpoint_path") or ""
    if step is None:
        step = _last_step(job, attempt.number, run.start_time, nxt.start_time if nxt else None)
    return step, checkpoint_path


def _resumed_at(nxt: Run | None, next_attempt: JobAttempt | None) -> datetime | None:
    resumed_at = nxt.start_time if nxt else None
    if resumed_at is None and next_attempt is not None and next_attempt.started_at:
        resumed_at = next_attempt.started_at
    return resumed_at


def _resumed_from(nxt: Run | None) -> tuple[int | None, str]:
    """(step, checkpoint path) the next run resumed from, as far as its events say."""
    if nxt and nxt.resumed:
        step = nxt.resumed.step if nxt.resumed.step is not None else \
            nxt.resumed.data.get("step")
        return step, nxt.resumed.data.get("path", "")
    if nxt and nxt.started:
        return nxt.started.data.get("resumed_from_step"), ""
    return None, ""


def _steps_lost(step: int | None, resumed_step: int | None, nxt: Run | None) -> int | None:
    if step is None or nxt is None or nxt.started is None:
        return None
    return max(step - (resumed_step or 0), 0)


def _signal_text(preempted: list[JobEvent], notices: list[JobEvent], marker_text: str,
                 stockout_of: JobAttempt | None) -> str:
    if preempted:
        return f"trainer: preempted by {preempted[-1].data.get('signal') or 'a signal'}"
    if notices:
        return notices[0].data.get("text", "")
    if stockout_of is not None:
        return stockout_of.error_message or "STOCKOUT"
    return marker_text


def _last_step(job: Job, attempt: int, start: datetime | None, end: datetime | None) -> int | None:
    steps = StepMetric.objects.filter(job_id=job.pk, attempt=attempt)
    if start is not None:
        steps = steps.filter(timestamp__gte=start)
    if end is not None:
        steps = steps.filter(timestamp__lt=end)
    return steps.aggregate(m=Max("step"))["m"]


def _checkpoint_event(checkpoints: list[JobEvent], step: int | None,
                      path: str) -> JobEvent | None:
    if step is None:
        return None
    matches = [c for c in checkpoints if c.step == step or c.data.get("step") == step]
    exact = [c for c in matches if path and c.data.get("path", "").rstrip("/") ==
             path.rstrip("/")]
    found = exact or matches
    return found[-1] if found else None


# --- storing -----------------------------------------------------------------------------------

def _save(job: Job, row: Wanted) -> JobRestart:
    """Create or update one record; tell the team when a primary replica's record is new (a
    preemption or restart) and when it first resumes (recovered)."""
    key = {"job": job, "attempt": row.attempt, "replica": row.replica, "ordinal": row.ordinal}
    with transaction.atomic():
        record = JobRestart.objects.select_for_update().filter(**key).first()
        created = record is None
        if created:
            try:
                with transaction.atomic():
                    record = JobRestart.objects.create(**key, **row.fields)
            except IntegrityError:  # created by a concurrent detection: update that one
                record = JobRestart.objects.select_for_update().get(**key)
                created = False
        was_resumed = not created and record.resumed_at is not None
        if not created:
            changed = [name for name, value in row.fields.items()
                       if getattr(record, name) != value]
            for name in changed:
                setattr(record, name, row.fields[name])
            if changed:
                record.save(update_fields=changed)
        if row.replica == PRIMARY:
            _notify(job, record, created=created, resumed_now=not was_resumed and
                    record.resumed_at is not None)
    return record


def _notify(job: Job, record: JobRestart, *, created: bool, resumed_now: bool) -> None:
    signals.restart_recorded.send(sender=JobRestart, job=job, record=record, created=created,
                                  resumed_now=resumed_now)
