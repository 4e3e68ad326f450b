"""The one task decorator every task in the project uses, and queueing a task by name.

Policy lives here so tasks stay short: every task acknowledges late and is re-queued when its
worker dies (so a killed worker never loses a submission), receives ids as strings, retries on
the exceptions it names with capped exponential backoff and jitter, and may be a singleton (one
run at a time across all workers, for the periodic reconcile and log-follow sweeps).

Services never import a tasks module: they queue a task by its name (`enqueue`), once the
transaction that made the work commits. Tasks are registered with `shared_task`, so this module
needs no Celery app (config/celery.py makes it).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from celery import current_app, shared_task
from django.db import transaction

from controlplane.core.leases import held_lease

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def enqueue(name: str, *args: str, countdown: float | None = None) -> None:
    """Queue task NAME with ARGS (ids as strings) once the current transaction commits.

    robust: a broker that is down must not fail the request that made the work; the periodic
    sweeps (reconcile, follow, deliver) pick up whatever a lost message left undone.
    """
    transaction.on_commit(lambda: send_now(name, *args, countdown=countdown), robust=True)


def send_now(name: str, *args: str, countdown: float | None = None,
             expires: float | None = None) -> None:
    """Queue task NAME now: for callers with nothing uncommitted that the task must see.
    expires: seconds after which a message still queued is dropped, not run."""
    task = current_app.tasks.get(name)
    if task is None:
        # The tasks modules are found through INSTALLED_APPS; a web process imports them on
        # the first send, so the task's own options (and eager mode in tests) apply.
        current_app.loader.import_default_modules()
        task = current_app.tasks.get(name)
    if task is None:
        current_app.send_task(name, args=args, countdown=countdown, expires=expires)
    else:
        task.apply_async(args, countdown=countdown, expires=expires)


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

        return shared_task(  # type: ignore[return-value]
            run,
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            retry_jitter=True,
        )

    return decorate
