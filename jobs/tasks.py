"""Celery tasks: thin wrappers that pass ids as strings to jobs.lifecycle and jobs.follower."""

from __future__ import annotations

import logging

from controlplane.celery import task
from jobs import follower, lifecycle
from jobs.backends.errors import TransientBackendError
from jobs.models import ACTIVE_STATES, Job

logger = logging.getLogger(__name__)


@task(retry_on=(TransientBackendError,), max_retries=12)
def submit_job(job_id: str) -> None:
    lifecycle.submit(int(job_id))


@task(retry_on=(TransientBackendError,), max_retries=6)
def cancel_job(job_id: str) -> None:
    lifecycle.send_cancel(int(job_id))


@task(singleton_ttl_s=120)
def reconcile_jobs() -> None:
    """Level-triggered: every unfinished job, every few seconds, whatever happened before."""
    for job_id in Job.objects.filter(state__in=ACTIVE_STATES).values_list("pk", flat=True):
        try:
            lifecycle.reconcile(job_id)
        except TransientBackendError as exc:
            # The next sweep tries again; one slow job must not stop the others.
            logger.warning("reconcile job %s: %s", job_id, exc)


@task(singleton_ttl_s=120)
def follow_logs() -> None:
    follower.follow()
