"""Creating jobs, submitting them exactly once, reconciling them with the backend, cancelling.

Every function here is safe to run twice, concurrently, or after a crash at any line: it locks
the job row, re-reads the state, and does nothing when there is nothing to do. The backend is
the source of truth for a submitted job; the database follows it.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import composer
from jobs.backends import errors
from jobs.backends.base import TERMINAL_VERTEX_STATES, RemoteJob, get_backend
from jobs.models import ACTIVE_STATES, Job, JobAttempt, JobState, Team, display_name_for

logger = logging.getLogger(__name__)

VERTEX_TO_JOB_STATE: dict[str, str] = {
    "JOB_STATE_QUEUED": JobState.QUEUED,
    "JOB_STATE_PENDING": JobState.PENDING,
    "JOB_STATE_RUNNING": JobState.RUNNING,
    "JOB_STATE_UPDATING": JobState.RUNNING,
    "JOB_STATE_PAUSED": JobState.RUNNING,
    "JOB_STATE_CANCELLING": JobState.CANCELLING,
    "JOB_STATE_SUCCEEDED": JobState.SUCCEEDED,
    "JOB_STATE_FAILED": JobState.FAILED,
    "JOB_STATE_CANCELLED": JobState.CANCELLED,
    # Terminal states Vertex uses elsewhere: treat as ended without success.
    "JOB_STATE_EXPIRED": JobState.FAILED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": JobState.FAILED,
}


def labels_for(job: Job, attempt: int) -> dict[str, str]:
    # Label values: <=64 lowercase letters, digits, '_' and '-' (VERTEX_FACTS.md section 1).
    return {"cp-job": str(job.pk), "cp-attempt": str(attempt), "cp-team": job.team.slug[:63]}


def create_job(*, team: Team, user: Any, request: dict[str, Any],
               composition: composer.Composition) -> Job:
    """Record a validated job and queue its submission once the row is committed."""
    from jobs.tasks import submit_job

    with transaction.atomic():
        job = Job.objects.create(
            team=team, created_by=user, name=request["name"], request=request,
            custom_job=composition.custom_job, project=settings.VERTEX_PROJECT,
            region=request.get("region") or settings.VERTEX_REGION,
        )
        JobAttempt.objects.create(job=job, number=1, display_name=display_name_for(job.pk, 1))
        job.events.create(kind="state", attempt=1,
                          data={"from": "", "to": JobState.QUEUED, "source": "created"})
        transaction.on_commit(lambda: submit_job.delay(str(job.pk)))
    return job


def submit(job_id: int) -> None:
    """Create the current attempt's CustomJob unless it exists already. Exactly once."""
    backend = get_backend()
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("team").get(pk=job_id)
        if job.state != JobState.QUEUED:
            return
        attempt, _ = JobAttempt.objects.get_or_create(
            job=job, number=job.attempt,
            defaults={"display_name": display_name_for(job.pk, job.attempt)},
        )
        if attempt.vertex_name:
            return
        labels = labels_for(job, attempt.number)
        # Look before creating: an earlier try may have created it and crashed before saving.
        remote = backend.find_custom_job(attempt.display_name, labels)
        if remote is None:
            spec = composer.for_attempt(job.custom_job, display_name=attempt.display_name,
                                        labels=labels, output_uri=job.output_uri)
            try:
                remote = backend.create_custom_job(spec)
            except (errors.InvalidJobSpec, errors.PermissionDenied) as exc:
                # The job as written can never run: fail it now instead of retrying forever.
                attempt.error_message = str(exc)
                attempt.save(update_fields=["error_message"])
                job.update_state(JobState.FAILED, error=str(exc), source="submit")
                return
        _record_remote(job, attempt, remote, source="submit")


def _record_remote(job: Job, attempt: JobAttempt, remote: RemoteJob, *, source: str) -> None:
    attempt.vertex_name = remote.name
    attempt.vertex_job_id = remote.job_id
    attempt.vertex_state = remote.state
    attempt.submitted_at = attempt.submitted_at or remote.create_time or timezone.now()
    attempt.started_at = attempt.started_at or remote.start_time
    if remote.is_terminal:
        attempt.ended_at = attempt.ended_at or remote.end_time or timezone.now()
        attempt.error_message = remote.error_message
    attempt.save()
    new_state = VERTEX_TO_JOB_STATE.get(remote.state)
    if new_state is None:
        return
    at = remote.end_time if remote.is_terminal else None
    if new_state == JobState.RUNNING:
        at = remote.start_time
    job.update_state(new_state, at=at, error=remote.error_message, source=source)


def reconcile(job_id: int) -> None:
    """Bring one job in line with what the backend says about its current attempt."""
    job = Job.objects.select_related("team").get(pk=job_id)
    if job.state not in ACTIVE_STATES:
        return
    attempt = job.current_attempt()
    if attempt is None or not attempt.vertex_name:
        _repair_unsubmitted(job)
        return
    try:
        remote = get_backend().get_custom_job(attempt.vertex_name)
    except errors.NotFound:
        remote = None
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("team").get(pk=job_id)
        attempt = JobAttempt.objects.select_for_update().get(pk=attempt.pk)
        if job.state not in ACTIVE_STATES or attempt.number != job.attempt:
            return  # changed while we were asking the backend
        if remote is None:
            job.update_state(JobState.FAILED, source="reconcile",
                             error=f"CustomJob {attempt.vertex_name} no longer exists on Vertex")
            return
        _record_remote(job, attempt, remote, source="reconcile")
        if job.state == JobState.CANCELLING and remote.state not in (
                "JOB_STATE_CANCELLING", *TERMINAL_VERTEX_STATES):
            _resend_cancel_if_lost(job)


def _resend_cancel_if_lost(job: Job) -> None:
    """We asked to cancel but the backend still runs it: the request was lost; ask again."""
    from jobs.tasks import cancel_job

    if timezone.now() - job.state_changed_at > timedelta(seconds=settings.CP_RESUBMIT_AFTER_S):
        transaction.on_commit(lambda: cancel_job.delay(str(job.pk)))


def _repair_unsubmitted(job: Job) -> None:
    """A job with no CustomJob recorded: its submit message was lost, or is still on its way."""
    from jobs.tasks import submit_job

    if job.state == JobState.CANCELLING:
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job.pk)
            job.update_state(JobState.CANCELLED, source="reconcile")
        return
    waited = timezone.now() - job.state_changed_at
    if job.state == JobState.QUEUED and waited > timedelta(seconds=settings.CP_RESUBMIT_AFTER_S):
        logger.info("job %s queued for %s without a CustomJob: submitting again", job.pk, waited)
        submit_job.delay(str(job.pk))


def request_cancel(job_id: int) -> bool:
    """Mark a job for cancellation and queue the call to the backend. Returns whether it will."""
    from jobs.tasks import cancel_job

    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.state not in ACTIVE_STATES:
            return False
        if job.state == JobState.CANCELLING:
            return True
        attempt = job.current_attempt()
        if attempt is None or not attempt.vertex_name:
            # Not on Vertex yet: nothing to stop. A submit that runs later sees CANCELLED.
            job.update_state(JobState.CANCELLED, source="cancel")
            return True
        job.update_state(JobState.CANCELLING, source="cancel")
        transaction.on_commit(lambda: cancel_job.delay(str(job_id)))
    return True


def send_cancel(job_id: int) -> None:
    """Ask the backend to cancel (best effort, as Vertex); the reconciler sees the job end."""
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.CANCELLING:
        return
    attempt = job.current_attempt()
    if attempt is None or not attempt.vertex_name:
        return
    # Already ended, or gone: the reconciler records how it ended.
    with contextlib.suppress(errors.FailedPrecondition, errors.NotFound):
        get_backend().cancel_custom_job(attempt.vertex_name)
