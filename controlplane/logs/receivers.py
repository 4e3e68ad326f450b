"""What the runs app's signals mean for the logs (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from controlplane.logs import health, live, restarts
from controlplane.logs.models import LogFailure
from controlplane.runs.models import ACTIVE_STATES, JobState
from vertexplan.logparse import failures


def on_restarts_due(job_id: int, force: bool = False, **_: Any) -> None:
    restarts.refresh(job_id, force=force)


def on_jobs_reconciled(job_ids: list[int], **_: Any) -> None:
    """A reconcile sweep's page of jobs in line with the backend: for each, what restarts_due
    and then job_reconciled ask of this app (on_restarts_due, health.on_job_reconciled), each
    read for the page at once."""
    restarts.refresh_many(job_ids)
    health.check_many(job_ids)


def on_job_state_changed(job: Any, event: Any, **_: Any) -> None:
    live.state_changed(job.pk, job.state, job.state in ACTIVE_STATES)
    _record_job_error(job, event)


def _record_job_error(job: Any, event: Any) -> None:
    """A job that failed: what CustomJob.error says is classified like a log line, so the
    diagnosis has a cause even when the log said nothing (a stockout, an image never pulled)."""
    if job.state != JobState.FAILED or not job.error_message:
        return
    attempt = job.current_attempt()
    code = attempt.error_code if attempt is not None else 0
    kind = failures.classify_job_error(code, job.error_message)
    LogFailure.objects.get_or_create(
        job=job, insert_id=f"customjob-error-a{job.attempt}",
        defaults={"attempt": job.attempt, "kind": kind, "timestamp": event.timestamp,
                  "replica": "", "summary": failures.clip(job.error_message)})
