"""Celery tasks of runs: thin wrappers that pass ids as strings to controlplane.runs.lifecycle."""

from __future__ import annotations

import logging

from controlplane.backends.errors import TransientBackendError
from controlplane.core.queue import task
from controlplane.runs import admission, counts, lifecycle, reconcile

logger = logging.getLogger(__name__)


@task(retry_on=(TransientBackendError,), max_retries=12)
def submit_job(job_id: str) -> None:
    lifecycle.submit(int(job_id))


@task(retry_on=(TransientBackendError,), max_retries=6)
def cancel_job(job_id: str) -> None:
    lifecycle.send_cancel(int(job_id))


@task(singleton_ttl_s=30, idle=reconcile.nothing_to_do)
def reconcile_jobs() -> None:
    """Level-triggered: every unfinished job, every few seconds, whatever happened before,
    read from Vertex in a few listings per region (controlplane/runs/reconcile.py).

    The lease is short: a worker killed mid-sweep holds it at most 30 s."""
    reconcile.sweep()


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
