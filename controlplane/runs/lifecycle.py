"""Recording jobs, submitting them exactly once, reconciling them with the backend, recovering
them, cancelling. (Pricing a new job and reserving its budget happen a layer up, in
controlplane/compose/submission.py, which then records it here.)

Every function here is safe to run twice, concurrently, or after a crash at any line: it locks
the job row, re-reads the state, and does nothing when there is nothing to do. The backend is
the source of truth for a submitted job; the database follows it.

Exactly once: an attempt's CustomJob has a deterministic display name (`cp-<job>-a<n>`) and
labels (cp-job, cp-attempt, cp-team), and submit() looks it up before creating it, holding the
job's row lock; a crash between "created" and "saved" rolls the transaction back and the next
try (a redelivered message, or the reconciler's repair) finds the CustomJob instead of creating
a second one.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.base import TERMINAL_VERTEX_STATES, Backend, RemoteJob, get_backend
from controlplane.core import price_table, signals
from controlplane.core.price_table import PricedJob
from controlplane.core.queue import enqueue, send_now
from controlplane.runs import checkpoints, quota, recovery, recovery_policy
from controlplane.runs.job_states import job_state_for
from controlplane.runs.models import (
    ACTIVE_STATES,
    Job,
    JobAttempt,
    JobState,
    RestartCause,
    display_name_for,
)
from controlplane.teams import quotas as team_quotas
from controlplane.teams import tracking as team_tracking
from controlplane.teams.models import Team
from vertexplan import composer

logger = logging.getLogger(__name__)

# The environment variable that tells the trainer which checkpoint to start from when its own
# checkpoint folder is empty (a resubmission from a chosen checkpoint of an earlier job).
RESUME_ENV = "CP_RESUME_FROM"


def labels_for(job: Job, attempt: int) -> dict[str, str]:
    # Label values: <=64 lowercase letters, digits, '_' and '-' (VERTEX_FACTS.md section 1).
    return contract_labels.attempt_labels(job.pk, attempt, job.team.slug)


SUBMIT_TASK = "controlplane.runs.tasks.submit_job"
CANCEL_TASK = "controlplane.runs.tasks.cancel_job"


def _queue_submit(job_id: int, countdown: float | None = None) -> None:
    """Queue the submission once the transaction commits; the reconciler re-queues a lost one."""
    enqueue(SUBMIT_TASK, str(job_id), countdown=countdown)


# --- creating -----------------------------------------------------------------------------------

def record_job(*, team: Team, user: Any, composition: composer.Composition,
               priced: PricedJob | None, resubmitted_from: Job | None = None,
               resume: tuple[int | None, str] = (None, ""),
               ) -> Job:
    """Record a validated, priced job (its request as composed) and queue its submission once
    the row is committed.

    The caller holds the transaction in which the team's budget was reserved for it."""
    request = composition.request
    scheduling = recovery.scheduling_of(composition.custom_job)
    policy, problems = recovery_policy.parse_policy(request, spot=scheduling == "SPOT")
    if problems:
        raise ValueError(f"invalid recovery settings: {problems}")
    # With the queue in front of Vertex on, the job waits for its team's share there
    # (controlplane/runs/admission.py admits it and queues its submission).
    queued_here = bool(getattr(settings, "CP_ADMISSION", False))
    job = Job.objects.create(
        state=JobState.QUEUED_LOCAL if queued_here else JobState.QUEUED,
        priority=team_quotas.priority_of(request.to_dict(), team),
        team=team, created_by=user, name=request.name, request=request.to_dict(),
        custom_job=composition.custom_job, project=settings.VERTEX_PROJECT,
        region=request.region,
        recovery_strategy=policy.strategy, max_recoveries=policy.max_recoveries,
        recovery_options=policy.options(), resubmitted_from=resubmitted_from,
        resume_from_step=resume[0], resume_from=resume[1],
        price_snapshot=priced.snapshot if priced else None,
        estimate_micros=priced.micros if priced else None,
        estimate_hours=priced.hours if priced else None,
    )
    JobAttempt.objects.create(
        job=job, number=1, display_name=display_name_for(job.pk, 1),
        scheduling=scheduling, region=job.region,
        resume_step=resume[0], resume_checkpoint=resume[1],
        submit_queued_at=timezone.now(),
    )
    job.events.create(kind="state", attempt=1,
                      data={"from": "", "to": job.state, "source": "created"})
    if not queued_here:
        _queue_submit(job.pk)
    return job


def clone_request(job: Job) -> dict[str, Any]:
    """The job's request as a body for POST /api/v1/jobs/ (or the compose form's prefill)."""
    body = {k: v for k, v in job.request.items() if v is not None}
    body["name"] = f"{job.name}-clone"[:100]
    body["team"] = job.team.slug
    return body


# --- submitting ---------------------------------------------------------------------------------

def backend_for(backend: Backend, region: str) -> Backend:
    """The backend of REGION (an attempt's; "" is the backend's own)."""
    if not region or region == backend.region:
        return backend
    for_region = getattr(backend, "for_region", None)
    if for_region is None:
        raise errors.InvalidJobSpec(f"the backend cannot submit to {region}")
    return for_region(region)


def attempt_spec(job: Job, attempt: JobAttempt, tracking_env: dict[str, str] | None = None
                 ) -> dict[str, Any]:
    """The CustomJob of one attempt: the job's, on the attempt's scheduling strategy, with the
    team's tracking settings that may be shown (the key is added only when it is sent)."""
    custom_job = job.custom_job
    if attempt.scheduling and attempt.scheduling != recovery.scheduling_of(custom_job):
        custom_job = recovery.with_scheduling(custom_job, attempt.scheduling)
    spec = composer.for_attempt(custom_job, display_name=attempt.display_name,
                                labels=labels_for(job, attempt.number), output_uri=job.output_uri)
    return composer.with_env(spec, tracking_env or {})


def submit(job_id: int) -> None:
    """Create the current attempt's CustomJob unless it exists already. Exactly once."""
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("team").get(pk=job_id)
        if job.state not in (JobState.QUEUED, JobState.WAITING_FOR_QUOTA) or \
                not job.on_job_path:
            return
        attempt, _ = JobAttempt.objects.get_or_create(
            job=job, number=job.attempt,
            defaults={"display_name": display_name_for(job.pk, job.attempt),
                      "region": job.region},
        )
        if attempt.vertex_name:
            return
        if attempt.not_before and timezone.now() < attempt.not_before:
            return  # still backing off: the delayed message or the reconciler comes back
        try:
            backend = backend_for(get_backend(), attempt.region)
            labels = labels_for(job, attempt.number)
            # Look before creating: an earlier try may have created it and crashed before saving.
            remote = backend.find_custom_job(attempt.display_name, labels)
            if remote is None:
                _refresh_resume_point(job, attempt)
                shown_env, secret_env = team_tracking.job_environment(job.team)
                spec = attempt_spec(job, attempt, shown_env)
                # What is stored (and shown, and exported) never holds the team's key.
                attempt.submitted_spec = spec
                # The prices this attempt is billed at: its own region and scheduling, now.
                priced, _ = price_table.price_job(spec, attempt.region or job.region)
                attempt.price_snapshot = priced.snapshot if priced else job.price_snapshot
                remote = backend.create_custom_job(composer.with_env(spec, secret_env))
        except errors.QuotaExceeded as exc:
            quota.wait_for_quota(job, attempt, exc)
            _queue_submit(job.pk, countdown=quota.seconds_until_retry(job))
            return
        except (errors.InvalidJobSpec, errors.PermissionDenied) as exc:
            # The job as written can never run: fail it now instead of retrying forever.
            attempt.error_message = str(exc)
            attempt.failure = recovery.Failure.CONFIG
            attempt.save(update_fields=["error_message", "failure", "submitted_spec",
                                        "price_snapshot"])
            job.update_state(JobState.FAILED, error=str(exc), source="submit")
            return
        quota.end_wait(job)
        record_remote(job, attempt, remote, source="submit")
        _announce_submission(job, attempt)


def _refresh_resume_point(job: Job, attempt: JobAttempt) -> None:
    """A recovery attempt resumes from the newest checkpoint when it is submitted, not when it
    was planned: the emergency checkpoint of the attempt before may have reached the log
    during the backoff. (The trainer finds the same one in the shared output folder.)"""
    if attempt.reason != "recovery":
        return
    newest = checkpoints.newest(job)
    if newest is not None and (attempt.resume_step is None or newest.step > attempt.resume_step):
        attempt.resume_step, attempt.resume_checkpoint = newest.step, newest.path
        attempt.save(update_fields=["resume_step", "resume_checkpoint"])


def _announce_submission(job: Job, attempt: JobAttempt) -> None:
    job.events.create(kind="submitted", attempt=attempt.number, data={
        "vertex_name": attempt.vertex_name, "scheduling": attempt.scheduling,
        "region": attempt.region, "reason": attempt.reason,
        "resume_step": attempt.resume_step, "resume_path": attempt.resume_checkpoint,
    })
    signals.attempt_submitted.send(sender=Job, job=job, attempt=attempt)


# --- reconciling --------------------------------------------------------------------------------

def record_remote(job: Job, attempt: JobAttempt, remote: RemoteJob, *, source: str
                  ) -> None:
    """Record what the backend says of the locked job's current attempt, and follow it."""
    attempt.vertex_name = remote.name
    attempt.vertex_job_id = remote.job_id
    attempt.vertex_state = remote.state
    attempt.submitted_at = attempt.submitted_at or remote.create_time or timezone.now()
    attempt.started_at = attempt.started_at or remote.start_time
    if remote.is_terminal:
        attempt.ended_at = attempt.ended_at or remote.end_time or timezone.now()
        attempt.error_message = remote.error_message
        attempt.error_code = remote.error_code
        attempt.failure = recovery.classify(
            state=remote.state, error_code=remote.error_code, error_message=remote.error_message,
            spot=attempt.scheduling == "SPOT", preempted=_preempted(job, attempt),
        )
    attempt.save()
    new_state = job_state_for(remote.state)
    if new_state is None:
        return
    if new_state == JobState.FAILED and job.state != JobState.CANCELLING and \
            _try_recovery(job, attempt):
        return
    at = remote.end_time if remote.is_terminal else None
    if new_state == JobState.RUNNING:
        at = remote.start_time if attempt.number == 1 else None
    job.update_state(new_state, at=at, error=remote.error_message, source=source)


def _preempted(job: Job, attempt: JobAttempt) -> bool:
    return job.restart_records.filter(attempt=attempt.number,
                                      cause=RestartCause.PREEMPTION).exists() or \
        job.events.filter(attempt=attempt.number, kind="preempted").exists()


def reconcile(job_id: int, listed: RemoteJob | None = None) -> None:
    """Bring one job in line with what the backend says about its current attempt.

    LISTED: the attempt's CustomJob as this sweep's listing read it (controlplane/runs/
    reconcile.py), used as a GetCustomJob's answer would be; without it, or when it names
    another CustomJob (the job moved on to a new attempt since the listing), it is got."""
    job = Job.objects.select_related("team").get(pk=job_id)
    if job.state not in ACTIVE_STATES or not job.on_job_path:
        return
    # Preemptions first: how an attempt that just ended is classified depends on them.
    signals.restarts_due.send(sender=Job, job_id=job.pk, force=False)
    attempt = job.current_attempt()
    if attempt is None or not attempt.vertex_name:
        _repair_unsubmitted(job)
        return
    remote: RemoteJob | None
    if listed is not None and listed.name == attempt.vertex_name:
        remote = listed
    else:
        try:
            remote = backend_for(get_backend(), attempt.region).get_custom_job(
                attempt.vertex_name)
        except errors.NotFound:
            remote = None
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("team").get(pk=job_id)
        attempt = JobAttempt.objects.select_for_update().get(pk=attempt.pk)
        if job.state not in ACTIVE_STATES or attempt.number != job.attempt:
            return  # changed while we were asking the backend
        Job.objects.filter(pk=job.pk).update(reconciled_at=timezone.now())
        if remote is None:
            job.update_state(JobState.FAILED, source="reconcile",
                             error=f"CustomJob {attempt.vertex_name} no longer exists on Vertex")
            return
        ended_now = remote.is_terminal and attempt.ended_at is None
        record_remote(job, attempt, remote, source="reconcile")
        if job.state == JobState.CANCELLING and remote.state not in (
                "JOB_STATE_CANCELLING", *TERMINAL_VERTEX_STATES):
            _resend_cancel_if_lost(job)
    if ended_now:
        # The attempt's end (a stockout) is a signal too, and the next attempt may resume.
        signals.restarts_due.send(sender=Job, job_id=job.pk, force=True)
    signals.job_reconciled.send(sender=Job, job_id=job.pk)


def _resend_cancel_if_lost(job: Job) -> None:
    """We asked to cancel but the backend still runs it: the request was lost; ask again."""
    if timezone.now() - job.state_changed_at > timedelta(seconds=settings.CP_RESUBMIT_AFTER_S):
        enqueue(CANCEL_TASK, str(job.pk))


def _repair_unsubmitted(job: Job) -> None:
    """A job with no CustomJob recorded: its submit message was lost, or is still on its way,
    or its attempt is backing off. Re-queue it at most once per CP_RESUBMIT_AFTER_S."""
    if job.state == JobState.CANCELLING:
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job.pk)
            job.update_state(JobState.CANCELLED, source="reconcile")
        return
    if job.state not in (JobState.QUEUED, JobState.WAITING_FOR_QUOTA):
        return
    attempt = job.current_attempt()
    now = timezone.now()
    if attempt is not None and attempt.not_before and now < attempt.not_before:
        return
    last = (attempt.submit_queued_at or attempt.created_at) if attempt else job.state_changed_at
    if now - last <= timedelta(seconds=settings.CP_RESUBMIT_AFTER_S):
        return
    if attempt is not None:
        JobAttempt.objects.filter(pk=attempt.pk).update(submit_queued_at=now)
    logger.info("job %s queued since %s without a CustomJob: submitting again", job.pk, last)
    send_now(SUBMIT_TASK, str(job.pk))


# --- recovering ---------------------------------------------------------------------------------

def _try_recovery(job: Job, attempt: JobAttempt) -> bool:
    """Called with the job locked when its current attempt FAILED: start the next attempt if
    the strategy says so. Returns whether it did."""
    policy = recovery.policy_of(job)
    home = recovery.Placement(recovery.scheduling_of(job.custom_job), job.region)
    current = recovery.Placement(attempt.scheduling or home.scheduling,
                                 attempt.region or job.region)
    here, in_region = recovery.streaks([
        recovery.Placement(a.scheduling or home.scheduling, a.region or job.region)
        for a in job.attempts.order_by("-number")])
    decision = recovery.plan(policy=policy, custom_job=job.custom_job, home=home,
                             current=current, failure=recovery.Failure(attempt.failure),
                             recoveries_done=job.recoveries, tries_here=here,
                             tries_in_region=in_region)
    if decision.placement is None:
        if attempt.failure in recovery.RECOVERABLE and policy.enabled:
            job.events.create(kind="recovery_refused", attempt=attempt.number,
                              data={"why": decision.why, "failure": attempt.failure})
        return False
    start_attempt(job, reason="recovery", placement=decision.placement,
                  delay_s=decision.delay_s, why=decision.why, failure=attempt.failure,
                  skipped=decision.skipped)
    return True


def start_attempt(job: Job, *, reason: str, placement: recovery.Placement, delay_s: float,
                  why: str, failure: str = "", skipped: list[str] | None = None) -> JobAttempt:
    """A new attempt of a locked job, resuming from its newest complete checkpoint (the
    trainer finds it in the job's output folder, which every attempt shares)."""
    now = timezone.now()
    number = job.attempt + 1
    newest = checkpoints.newest(job)
    step, path = (newest.step, newest.path) if newest else (None, "")
    attempt = JobAttempt.objects.create(
        job=job, number=number, display_name=display_name_for(job.pk, number), reason=reason,
        scheduling=placement.scheduling, region=placement.region,
        not_before=now + timedelta(seconds=delay_s), submit_queued_at=now,
        resume_checkpoint=path, resume_step=step,
    )
    job.attempt = number
    job.recoveries += 1
    job.save(update_fields=["attempt", "recoveries"])
    job.events.create(kind="recovery", attempt=number, timestamp=now, data={
        "from_attempt": number - 1, "failure": failure, "why": why,
        "scheduling": placement.scheduling, "region": placement.region,
        "delay_s": round(delay_s, 3), "resume_step": step, "resume_path": path,
        "skipped": skipped or [], "recovery": job.recoveries, "max": job.max_recoveries,
    })
    job.update_state(JobState.QUEUED, source=reason)
    _queue_submit(job.pk, countdown=delay_s)
    return attempt


# --- cancelling, resubmitting -------------------------------------------------------------------

def request_cancel(job_id: int) -> bool:
    """Mark a job for cancellation and queue the call to the backend. Returns whether it will."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.state not in ACTIVE_STATES or not job.on_job_path:
            return False
        if job.state == JobState.CANCELLING:
            return True
        attempt = job.current_attempt()
        if attempt is None or not attempt.vertex_name:
            # Not on Vertex yet (or backing off before a recovery): nothing to stop. A submit
            # that runs later sees CANCELLED.
            job.update_state(JobState.CANCELLED, source="cancel")
            return True
        job.update_state(JobState.CANCELLING, source="cancel")
        enqueue(CANCEL_TASK, str(job_id))
    return True


def cancel_remote(vertex_name: str, region: str) -> None:
    """Cancel an attempt's CustomJob that is no longer the job's current one (a hung attempt
    replaced by a new one), best effort: one that has ended or is gone is left alone."""
    with contextlib.suppress(errors.FailedPrecondition, errors.NotFound):
        backend_for(get_backend(), region).cancel_custom_job(vertex_name)


def send_cancel(job_id: int) -> None:
    """Ask the backend to cancel (best effort, as Vertex); the reconciler sees the job end."""
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.CANCELLING or not job.on_job_path:
        return
    attempt = job.current_attempt()
    if attempt is None or not attempt.vertex_name:
        return
    # Already ended, or gone: the reconciler records how it ended.
    with contextlib.suppress(errors.FailedPrecondition, errors.NotFound):
        backend_for(get_backend(), attempt.region).cancel_custom_job(attempt.vertex_name)
