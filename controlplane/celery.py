"""The Celery app and the one task decorator every task in the project uses.

Policy lives here so tasks stay short: every task acknowledges late and is re-queued when its
worker dies (so a killed worker never loses a submission), receives ids as strings, retries on
the exceptions it names with capped exponential backoff and jitter, and may be a singleton (one
run at a time across all workers, for the periodic reconcile and log-follow sweeps).
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

app = Celery("controlplane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["jobs", "jobs.serving"])

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def _beat_schedule() -> dict[str, dict[str, Any]]:
    from django.conf import settings

    from jobs.serving.schedule import beat_schedule as serving_schedule

    return {
        **serving_schedule(),
        "reconcile-jobs": {
            "task": "jobs.tasks.reconcile_jobs",
            "schedule": settings.CP_RECONCILE_INTERVAL_S,
        },
        "follow-logs": {
            "task": "jobs.tasks.follow_logs",
            "schedule": settings.CP_FOLLOW_INTERVAL_S,
        },
        # Teams whose month's spend crossed their budget (jobs/budgets/service.py).
        "check-budgets": {
            "task": "jobs.tasks.check_budgets",
            "schedule": getattr(settings, "CP_BUDGET_CHECK_INTERVAL_S", 60.0),
        },
        # Each team's log retention and the downsampling of long runs' metrics.
        "log-retention": {
            "task": "jobs.logs.tasks.apply_log_retention",
            "schedule": getattr(settings, "CP_LOG_RETENTION_INTERVAL_S", 3600.0),
        },
    }


@app.on_after_finalize.connect
def _setup_periodic_tasks(sender: Celery, **_: Any) -> None:
    sender.conf.beat_schedule = _beat_schedule()


def task(
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    max_retries: int = 8,
    singleton_ttl_s: float | None = None,
) -> Callable[[F], F]:
    """Register a Celery task with the project's policy.

    retry_on: exceptions worth another try (transient cloud errors); anything else propagates.
    singleton_ttl_s: when set, at most one run at a time across all workers; a run that finds
        the lease held returns None at once. The lease expires after the TTL, so a worker killed
        mid-run cannot block the sweep for longer than that.
    """

    def decorate(fn: F) -> F:
        name = f"{fn.__module__}.{fn.__name__}"

        @functools.wraps(fn)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if singleton_ttl_s is not None:
                from controlplane.leases import held_lease

                with held_lease(name, timedelta(seconds=singleton_ttl_s)) as acquired:
                    if not acquired:
                        logger.debug("%s already running elsewhere; skipped", name)
                        return None
                    return _call(self, *args, **kwargs)
            return _call(self, *args, **kwargs)

        def _call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except retry_on as exc:
                # Capped exponential backoff; Celery adds jitter with retry_jitter.
                countdown = min(2 ** self.request.retries, 60)
                logger.warning("%s: %s; retry %s in %ss", name, exc, self.request.retries + 1,
                               countdown)
                raise self.retry(exc=exc, countdown=countdown, max_retries=max_retries) from exc

        return app.task(  # type: ignore[return-value]
            run,
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            retry_jitter=True,
        )

    return decorate


def new_lease_holder() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
