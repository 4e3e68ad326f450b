"""Celery tasks of notifications: delivering the outbox."""

from __future__ import annotations

from controlplane.core.queue import task
from controlplane.notifications import service


@task()
def send_notification(notification_id: str) -> None:
    service.deliver(int(notification_id))


@task(singleton_ttl_s=60)
def deliver_pending() -> None:
    """Messages whose delivery failed for a passing reason, or whose message was lost."""
    service.sweep()
