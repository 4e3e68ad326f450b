"""Celery tasks of runs: thin wrappers that pass ids as strings to controlplane.runs.lifecycle."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.db.models import F
from django.utils import timezone

from controlplane.backends.errors import TransientBackendError
from controlplane.core import signals
from controlplane.core.queue import task
from controlplane.runs import admission, counts, lifecycle
from controlplane.runs.models import ACTIVE_STATES, Job, JobKind

logger = logging.getLogger(__name__)

# A sweep stops starting new jobs after this long, well inside its lease, so a slow backend
# never lets two sweeps overlap; the jobs it did not reach come first in the next one.
SWEEP_BUDGET_S = 20.0
RESTART_TRAILING = timedelta(minutes=3)


@task(retry_on=(TransientBackendError,), max_retries=12)
def submit_job(job_id: str) -> None:
    lifecycle.submit(int(job_id))


@task(retry_on=(TransientBackendError,), max_retries=6)
def cancel_job(job_id: str) -> None:
    lifecycle.send_cancel(int(job_id))


@task(singleton_ttl_s=30)
def reconcile_jobs() -> None:
    """Level-triggered: every unfinished job, every few seconds, whatever happened before.

    The lease is short: a worker killed mid-sweep holds it at most 30 s. The longest-unseen
    jobs go first, so a sweep cut short by its budget never starves the same jobs twice.
    """
    started = time.monotonic()
    # Trials and Ray jobs are their sweep's and cluster's to follow.
    job_ids = (Job.objects.filter(state__in=ACTIVE_STATES, kind=JobKind.JOB)
               .order_by(F("reconciled_at").asc(nulls_first=True), "pk")
               .values_list("pk", flat=True))
    job_ids = list(job_ids)
    for job_id in job_ids:
        if time.monotonic() - started > SWEEP_BUDGET_S:
            break
        try:
            lifecycle.reconcile(job_id)
        except TransientBackendError as exc:
            # The next sweep tries again; one slow job must not stop the others.
            logger.warning("reconcile job %s: %s", job_id, exc)
        except SoftTimeLimitExceeded:
            raise  # the sweep's time is up: stop here, the next sweep starts with the rest
        except Exception:
            # A broker or database hiccup, or a bug with one job: log it, go on with the rest.
            logger.exception("reconcile job %s failed", job_id)
    # Log lines keep arriving for a little while after a job ends (the follower trails it):
    # restarts they reveal are still recorded, and a late preemption changes the final cost.
    recent = Job.objects.filter(ended_at__gte=timezone.now() - RESTART_TRAILING,
                                kind=JobKind.JOB)
    for job_id in recent.values_list("pk", flat=True):
        try:
            signals.restarts_due.send(sender=Job, job_id=job_id, force=False)
            signals.job_reconciled.send(sender=Job, job_id=job_id)
        except SoftTimeLimitExceeded:
            raise
        except Exception:
            logger.exception("restart detection for job %s failed", job_id)


@task(singleton_ttl_s=120)
def fold_job_tally() -> None:
    """The jobs' tally, each group's rows summed into one (controlplane/runs/counts.py), so
    the job list's count reads a few rows whatever the number of state changes since."""
    folded = counts.fold()
    if folded:
        logger.debug("job tally: %d rows folded", folded)


@task(singleton_ttl_s=60)
def admit_jobs() -> None:
    """The queue in front of Vertex (controlplane/runs/admission.py), when it is on: admit,
    stop at a checkpoint and requeue, say why the others wait. Its own lease makes a round
    exactly once however many ticks overlap."""
    if admission.enabled():
        admission.tick()
