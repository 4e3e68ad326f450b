"""Celery tasks of sweeps: thin wrappers that pass ids as strings to lifecycle.py."""

from __future__ import annotations

import logging
import time

from django.db.models import F

from controlplane.backends.errors import TransientBackendError
from controlplane.core.queue import task
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import ACTIVE_STATES, Sweep

logger = logging.getLogger(__name__)
SWEEP_BUDGET_S = 20.0


@task(retry_on=(TransientBackendError,), max_retries=12)
def submit_sweep(sweep_id: str) -> None:
    lifecycle.submit(int(sweep_id))


@task(retry_on=(TransientBackendError,), max_retries=6)
def cancel_sweep(sweep_id: str) -> None:
    lifecycle.send_cancel(int(sweep_id))


def _no_sweep_active() -> bool:
    return not Sweep.objects.filter(state__in=ACTIVE_STATES).exists()


@task(singleton_ttl_s=30, idle=_no_sweep_active)
def reconcile_sweeps() -> None:
    """Every unfinished sweep, longest-unseen first, within a budget well inside the lease."""
    started = time.monotonic()
    ids = list(Sweep.objects.filter(state__in=ACTIVE_STATES)
               .order_by(F("reconciled_at").asc(nulls_first=True), "pk")
               .values_list("pk", flat=True))
    for sweep_id in ids:
        if time.monotonic() - started > SWEEP_BUDGET_S:
            break
        try:
            lifecycle.reconcile(sweep_id)
        except TransientBackendError as exc:
            logger.warning("reconcile sweep %s: %s", sweep_id, exc)
        except Exception:
            logger.exception("reconcile sweep %s failed", sweep_id)
