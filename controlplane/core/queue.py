"""The one task decorator every task in the project uses, and queueing a task by name.

Policy lives here so tasks stay short: every task acknowledges late and is re-queued when its
worker dies (so a killed worker never loses a submission), has a soft and a hard time limit
below the broker's visibility timeout (so a task that hangs is stopped before Redis would
deliver it a second time: controlplane/core/task_limits.py), receives ids as strings, retries
on the exceptions it names with capped exponential backoff and jitter (`retry_countdown`), and
may be a singleton (one run at a time across all workers, for the periodic reconcile and
log-follow sweeps).

Services never import a tasks module: they queue a task by its name (`enqueue`), once the
transaction that made the work commits. Tasks are registered with `shared_task`, so this module
needs no Celery app (config/celery.py makes it).
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from celery import current_app, shared_task
from django.conf import settings
from django.db import transaction

from controlplane.core.leases import held_lease
from controlplane.core.task_limits import broker_countdown, soft_limit

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

# A retry waits 2^n seconds after the n-th failure, at most this long, less its jitter.
RETRY_CAP_S = 60.0


def retry_countdown(retries: int, rng: random.Random | None = None) -> float:
    """The wait before retry number RETRIES + 1: capped exponential backoff with "equal
    jitter", a random point in the upper half of the wait (between 2^n / 2 and 2^n seconds,
    capped at RETRY_CAP_S), so tasks that failed together (a backend outage) do not all come
    back at the same moment, and none comes back sooner than half its backoff.

    Celery's own retry_jitter applies only to autoretry_for, never to a countdown given to
    self.retry as here, so the jitter is drawn here."""
    backoff = min(2.0 ** retries, RETRY_CAP_S)
    return backoff / 2 + (rng or random).uniform(0.0, backoff / 2)


def enqueue(name: str, *args: str, countdown: float | None = None) -> None:
    """Queue task NAME with ARGS (ids as strings) once the current transaction commits.

    robust: a broker that is down must not fail the request that made the work; the periodic
    sweeps (reconcile, follow, deliver) pick up whatever a lost message left undone.
    """
    transaction.on_commit(lambda: send_now(name, *args, countdown=countdown), robust=True)


def send_now(name: str, *args: str, countdown: float | None = None,
             expires: float | None = None) -> None:
    """Queue task NAME now: for callers with nothing uncommitted that the task must see.
    expires: seconds after which a message still queued is dropped, not run.
    countdown: at most what the broker's visibility timeout leaves after the task's time
    limit (controlplane/core/task_limits.py); every delayed task checks it is due."""
    task = current_app.tasks.get(name)
    if task is None:
        # The tasks modules are found through INSTALLED_APPS; a web process imports them on
        # the first send, so the task's own options (and eager mode in tests) apply.
        current_app.loader.import_default_modules()
        task = current_app.tasks.get(name)
    countdown = broker_countdown(
        countdown, visibility_s=settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout"),
        hard_s=getattr(task, "time_limit", None) or max(settings.CP_TASK_TIME_LIMIT_S,
                                                         settings.CP_LONG_TASK_TIME_LIMIT_S))
    if task is None:
        current_app.send_task(name, args=args, countdown=countdown, expires=expires)
    else:
        task.apply_async(args, countdown=countdown, expires=expires)


def task(
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    max_retries: int = 8,
    singleton_ttl_s: float | None = None,
    long_running: bool = False,
    idle: Callable[[], bool] | None = None,
) -> Callable[[F], F]:
    """Register a Celery task with the project's policy.

    retry_on: exceptions worth another try (transient cloud errors); anything else propagates.
    singleton_ttl_s: when set, at most one run at a time across all workers; a run that finds
        the lease held returns None at once. The lease expires after the TTL, so a worker killed
        mid-run cannot block the sweep for longer than that; and the run's own time limit is
        no longer than the TTL, so a run never outlives its lease while the next one starts.
    long_running: the task may take minutes over a big table (CP_LONG_TASK_TIME_LIMIT_S
        instead of CP_TASK_TIME_LIMIT_S); either way the worker raises SoftTimeLimitExceeded
        in the task at 80 % of its limit and kills it at the limit, and its message is
        acknowledged, not delivered again.
    idle: for a periodic sweep, a read that says its room has nothing to do (no object in a
        state the sweep acts on); when it does, the run returns before the lease. An idle
        room's tick then costs one read instead of the lease's two committed writes and the
        sweep's own reads, every few seconds for as long as the room stays empty. What
        arrives after the read is the next tick's, as with any tick.
    """

    def decorate(fn: F) -> F:
        name = f"{fn.__module__}.{fn.__name__}"
        hard_s = settings.CP_LONG_TASK_TIME_LIMIT_S if long_running \
            else settings.CP_TASK_TIME_LIMIT_S
        if singleton_ttl_s is not None:
            hard_s = min(hard_s, singleton_ttl_s)

        @functools.wraps(fn)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if idle is not None and idle():
                return None
            if singleton_ttl_s is not None:
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
                countdown = retry_countdown(self.request.retries)
                logger.warning("%s: %s; retry %s in %.1fs", name, exc,
                               self.request.retries + 1, countdown)
                raise self.retry(exc=exc, countdown=countdown, max_retries=max_retries) from exc

        return shared_task(  # type: ignore[return-value]
            run,
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            # A task killed at its time limit is acknowledged, not run again: what it left
            # undone is found by the periodic sweeps, as after any other failure.
            acks_on_timeout=True,
            soft_time_limit=soft_limit(hard_s),
            time_limit=hard_s,
            # Kept on the task for the tests that hold its limit within its lease.
            singleton_ttl_s=singleton_ttl_s,
        )

    return decorate
