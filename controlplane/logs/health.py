"""Hang and straggler detection for running jobs (issue 37), in the reconcile sweep.

The reconciler compares each unfinished job with its backend every few seconds and then sends
`job_reconciled`; for a RUNNING job this module reads what its log said (the newest step
events, the newest eval / checkpoint / phase events, the newest per-rank step times) and asks
vertexplan/health.py whether it is suspected to hang or has a straggler. A change of health is
written with the job's row locked and compared first, so two workers (or two sweeps) record
it, alert on it and restart for it once:

    suspected_hang  a `suspected_hang` event with the last line each replica printed, a Slack
                    alert (through `job_health_changed`), and where the team's policy says
                    restart_on_hang: the attempt is cancelled and a new one resumes from the
                    newest committed checkpoint (lifecycle.start_attempt, as recovery does),
                    recorded as a JobRestart of cause `hang`
    straggler       a `straggler` event naming the slow ranks
    ok              when steps come again, or the ranks even out
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from contract import events as contract_events
from controlplane.core import signals
from controlplane.logs.models import LogLine, StepMetric
from controlplane.logs.store import RANK_TIMES
from controlplane.runs import lifecycle, recovery
from controlplane.runs.models import (
    HealthState,
    Job,
    JobAttempt,
    JobEvent,
    JobKind,
    JobRestart,
    JobState,
    RestartCause,
    job_documents_except,
)
from controlplane.teams import policy as team_policy
from vertexplan import health

logger = logging.getLogger(__name__)

# Signs of progress besides steps.
ACTIVITY_KINDS = (contract_events.EVAL, contract_events.CHECKPOINT_SAVED, contract_events.PHASE,
                  contract_events.RESUMED, contract_events.RUN_STARTED,
                  contract_events.REPLICA_RESTARTED)
# Those that say the trainer is starting again (a replica restarted in place, a preemption
# Vertex recovered itself): the start-up allowance applies again until two steps follow.
START_KINDS = frozenset({contract_events.RESUMED, contract_events.RUN_STARTED,
                         contract_events.REPLICA_RESTARTED})
# Hang restarts one job may have: a job that hangs again and again has a bug a restart
# does not fix, and each restart costs its start-up.
MAX_HANG_RESTARTS = 3
# The newest lines read to find each replica's last one (a hung job prints none after them).
LAST_LINES_READ = 500
LINE_CLIP = 300


def on_job_reconciled(job_id: int, **_: Any) -> None:
    """The reconciler's signal: never lets a detection problem stop the job's other
    receivers (its cost)."""
    try:
        check(job_id)
    except Exception:
        logger.exception("health check of job %s failed", job_id)


def check_many(job_ids: list[int], now: datetime | None = None) -> dict[int, str | None]:
    """check() of every running job in JOB_IDS, their logs read in a few queries for them
    all; a problem with one job never stops the others. Returns each running job's health
    (None where its check failed)."""
    now = now or timezone.now()
    jobs = list(Job.objects.select_related("team").filter(
        pk__in=job_ids, state=JobState.RUNNING, kind=JobKind.JOB)
        .defer(*job_documents_except("custom_job", "health_detail")))
    page = _PageReads(jobs)
    rules: dict[int, team_policy.Effective] = {}
    out: dict[int, str | None] = {}
    for job in jobs:
        out[job.pk] = None
        try:
            if job.team_id not in rules:  # one read a team, not a job
                rules[job.team_id] = team_policy.effective(job.team)
            out[job.pk] = _judge(job, rules[job.team_id], _PagedReads(job, page), now)
        except Exception:
            logger.exception("health check of job %s failed", job.pk)
    return out


def check(job_id: int, now: datetime | None = None) -> str | None:
    """Bring a running job's health up to date; returns it (None: not a running job)."""
    job = Job.objects.select_related("team").filter(pk=job_id).first()
    if job is None or job.state != JobState.RUNNING or not job.on_job_path:
        return None
    return _judge(job, team_policy.effective(job.team), _JobReads(job), now or timezone.now())


class _JobReads:
    """What the verdicts read of one running job's current attempt, each when first asked."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def step_times(self) -> list[datetime]:
        """Its newest steps' times, newest step first."""
        return list(StepMetric.objects.filter(job=self.job, attempt=self.job.attempt)
                    .order_by("-step").values_list("timestamp", flat=True)
                    [:health.INTERVALS_KEPT + 1])

    def newest_activity(self) -> JobEvent | None:
        return (self.job.events.filter(attempt=self.job.attempt, kind__in=ACTIVITY_KINDS)
                .order_by("-timestamp", "-id").first())

    def rank_reports(self) -> list[list[float]]:
        """Its newest per-rank step time reports, oldest first."""
        rows = (self.job.events.filter(attempt=self.job.attempt, kind=RANK_TIMES)
                .order_by("-timestamp", "-id")
                .values_list("data", flat=True)[:health.StragglerPolicy.reports])
        return [list(d.get("rank_step_time_s") or []) for d in reversed(rows)]

    def resume_step(self) -> int | None:
        return (JobAttempt.objects.filter(job=self.job, number=self.job.attempt)
                .values_list("resume_step", flat=True).first())


class _PageReads:
    """The same reads of many running jobs, each kind in one query for them all: the newest
    rows of each job, a LATERAL subquery a job, so each job's index is read as one job's
    query reads it (not every step the page's jobs ever logged)."""

    def __init__(self, jobs: list[Job]) -> None:
        ids = [job.pk for job in jobs]
        self.steps: dict[int, list[tuple[int, datetime]]] = {}
        self.activity: dict[int, JobEvent] = {}
        self.ranks: dict[int, list[JobEvent]] = {}
        self.resume: dict[int, int | None] = {}
        if not ids:
            return
        # Tuples, not rows: a page of running jobs reads 51 steps each (25,000 for 500 jobs),
        # and making a model instance of each took most of a steady sweep's time.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT j.id, m.step, m.timestamp FROM {Job._meta.db_table} j CROSS JOIN "
                f"LATERAL (SELECT step, timestamp FROM {StepMetric._meta.db_table} m "
                "WHERE m.job_id = j.id AND m.attempt = j.attempt ORDER BY m.step DESC "
                "LIMIT %s) m WHERE j.id = ANY(%s)", [health.INTERVALS_KEPT + 1, ids])
            for job_id, step, timestamp in cursor.fetchall():
                self.steps.setdefault(job_id, []).append((step, timestamp))
        for event in _newest(JobEvent, ids, "AND m.kind = ANY(%s)", [list(ACTIVITY_KINDS)],
                             "m.timestamp DESC, m.id DESC", 1):
            self.activity[event.job_id] = event
        for event in _newest(JobEvent, ids, "AND m.kind = %s", [RANK_TIMES],
                             "m.timestamp DESC, m.id DESC", health.StragglerPolicy.reports):
            self.ranks.setdefault(event.job_id, []).append(event)
        self.resume = dict(JobAttempt.objects.filter(job_id__in=ids, number=F("job__attempt"))
                           .values_list("job_id", "resume_step"))


class _PagedReads(_JobReads):
    """One job's reads, from its page's."""

    def __init__(self, job: Job, page: _PageReads) -> None:
        super().__init__(job)
        self.page = page

    def step_times(self) -> list[datetime]:
        return [timestamp for _, timestamp in sorted(self.page.steps.get(self.job.pk, []),
                                                     key=lambda row: -row[0])]

    def newest_activity(self) -> JobEvent | None:
        return self.page.activity.get(self.job.pk)

    def rank_reports(self) -> list[list[float]]:
        reports = sorted(self.page.ranks.get(self.job.pk, []), key=lambda e: (e.timestamp, e.id))
        return [list(e.data.get("rank_step_time_s") or []) for e in reports]

    def resume_step(self) -> int | None:
        return self.page.resume.get(self.job.pk)


def _newest(model: Any, ids: list[int], where: str, params: list[Any], order: str,
            limit: int) -> Any:
    """The newest LIMIT rows of MODEL (by ORDER) of each job's current attempt. Only this
    module's constants reach the SQL's text; the ids and values are parameters."""
    table, jobs = model._meta.db_table, Job._meta.db_table
    return model.objects.raw(
        f"SELECT m.* FROM {jobs} j CROSS JOIN LATERAL (SELECT * FROM {table} m "
        f"WHERE m.job_id = j.id AND m.attempt = j.attempt {where} ORDER BY {order} "
        f"LIMIT %s) m WHERE j.id = ANY(%s)", [*params, limit, ids])


def _judge(job: Job, rule: team_policy.Effective, reads: _JobReads, now: datetime
           ) -> str | None:
    policy = health.HangPolicy(k=rule.hang_k, floor_s=rule.hang_floor_s)
    hang = _hang_verdict(job, now, policy, reads)
    if hang.hung:
        state, detail = HealthState.SUSPECTED_HANG, {
            "silent_s": round(hang.silent_s, 1), "threshold_s": round(hang.threshold_s, 1),
            "p95_s": None if hang.p95_s is None else round(hang.p95_s, 3), "why": hang.why}
    else:
        slow = health.straggler_verdict(reads.rank_reports())
        if slow.ranks:
            state, detail = HealthState.STRAGGLER, {
                "ranks": list(slow.ranks),
                "slowdown": {str(r): x for r, x in slow.slowdown.items()}, "why": slow.why}
        else:
            state, detail = HealthState.OK, {}
    if _unchanged(job, state, detail):
        return state  # most sweeps: no lock taken
    return _record(job.pk, job.attempt, state, detail, restart=rule.restart_on_hang, now=now)


def _unchanged(job: Job, state: str, detail: dict[str, Any]) -> bool:
    """Whether `state` is what the job already says (a straggler: of the same ranks)."""
    return job.health == state and (state != HealthState.STRAGGLER
                                    or job.health_detail.get("ranks") == detail.get("ranks"))


def _hang_verdict(job: Job, now: datetime, policy: health.HangPolicy, reads: _JobReads
                  ) -> health.HangVerdict:
    steps = reads.step_times()
    newest = reads.newest_activity()
    quiet = None
    if newest is not None and newest.kind == contract_events.PHASE and \
            newest.data.get("begins") is True:
        quiet = (str(newest.data.get("phase", "")), newest.timestamp.timestamp())
    running_since = job.state_changed_at
    if newest is not None and newest.kind in START_KINDS:
        running_since = max(running_since, newest.timestamp)
    step_times = [t.timestamp() for t in steps]
    starting = sum(1 for t in step_times if t >= running_since.timestamp()) < 2
    return health.hang_verdict(
        now=now.timestamp(), running_since=running_since.timestamp(), step_times=step_times,
        last_activity=newest.timestamp.timestamp() if newest is not None else None,
        quiet_phase=quiet, policy=policy,
        # Only a job in its start-up needs its shape (the start-up allowance).
        startup=_startup_shape(job, reads.resume_step()) if starting
        else health.StartupShape())


def _startup_shape(job: Job, resume_step: int | None) -> health.StartupShape:
    """The job's start-up shape: its pools and arguments, and the size of the checkpoint its
    attempt resumes from (its checkpoint_saved event's bytes, where it said)."""
    restore_bytes = 0
    if resume_step is not None:
        saved = (job.events.filter(kind=contract_events.CHECKPOINT_SAVED, step=resume_step)
                 .order_by("-timestamp", "-id").values_list("data", flat=True).first()) or {}
        size = saved.get("bytes")
        if isinstance(size, int | float) and not isinstance(size, bool):
            restore_bytes = int(size)
    return health.startup_shape(job.custom_job, restore_bytes)


def last_lines(job_id: int, attempt: int) -> dict[str, str]:
    """The last line each replica of an attempt printed (of the newest LAST_LINES_READ)."""
    found: dict[str, str] = {}
    newest = (LogLine.objects.filter(job_id=job_id, attempt=attempt)
              .order_by("-timestamp", "-insert_id")
              .values_list("replica", "message")[:LAST_LINES_READ])
    for replica, message in newest:
        found.setdefault(replica or "job", message[:LINE_CLIP])
    return dict(sorted(found.items()))


def _record(job_id: int, attempt: int, state: str, detail: dict[str, Any], *, restart: bool,
            now: datetime) -> str | None:
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.state != JobState.RUNNING or job.attempt != attempt:
            return None  # moved on while we read its log
        if _unchanged(job, state, detail):
            return state  # another worker recorded it first
        job.health, job.health_detail = state, detail
        job.save(update_fields=["health", "health_detail"])
        if state == HealthState.OK:
            return state
        data = dict(detail)
        if state == HealthState.SUSPECTED_HANG:
            data["last_lines"] = last_lines(job.pk, attempt)
            data["restart"] = _restart_note(job, restart)
        event = job.events.create(kind=state, attempt=attempt, timestamp=now, step=job.last_step,
                                  data=data)
        signals.job_health_changed.send(sender=Job, job=job, event=event)
        if state == HealthState.SUSPECTED_HANG and data["restart"] == "restarting":
            _restart(job, attempt, detail["why"], now)
    return state


def _restart_note(job: Job, restart: bool) -> str:
    if not restart:
        return "not restarted: the team's policy only alerts (restart_on_hang is off)"
    done = job.restart_records.filter(cause=RestartCause.HANG).count()
    if done >= MAX_HANG_RESTARTS:
        return f"not restarted: all {MAX_HANG_RESTARTS} hang restarts used"
    return "restarting"


def _restart(job: Job, number: int, why: str, now: datetime) -> None:
    """Cancel the hung attempt and start the next from the newest committed checkpoint (the
    locked job's recovery path). The hung attempt ends now for billing: the reconciler
    follows only the current attempt."""
    attempt = JobAttempt.objects.select_for_update().get(job=job, number=number)
    attempt.ended_at = attempt.ended_at or now
    attempt.failure = "hang"
    attempt.save(update_fields=["ended_at", "failure"])
    placement = recovery.Placement(attempt.scheduling or recovery.scheduling_of(job.custom_job),
                                   attempt.region or job.region)
    lifecycle.start_attempt(job, reason="hang", placement=placement, delay_s=0.0,
                            why=f"suspected hang: {why}", failure="hang")
    # The new attempt has shown nothing yet: the hang is its predecessor's, kept in its event.
    job.health, job.health_detail = HealthState.OK, {}
    job.save(update_fields=["health", "health_detail"])
    JobRestart.objects.get_or_create(
        job=job, attempt=number, replica="", ordinal=0,  # 0: the attempt as a whole
        defaults={"cause": RestartCause.HANG, "signal": why[:200], "occurred_at": now,
                  "step": job.last_step, "sources": ["health"]})
    if attempt.vertex_name:
        transaction.on_commit(functools.partial(
            lifecycle.cancel_remote, attempt.vertex_name, attempt.region or job.region),
            robust=True)

