"""Celery tasks of notifications: delivering the outbox."""

from __future__ import annotations

from controlplane.core.queue import task
from controlplane.notifications import service
from controlplane.notifications.models import Notification, NotificationStatus


@task()
def send_notification(notification_id: str) -> None:
    service.deliver(int(notification_id))


def _nothing_to_send() -> bool:
    """No message waiting to be sent or claimed by a worker (service.sweep acts on those)."""
    return not Notification.objects.filter(
        status__in=(NotificationStatus.PENDING, NotificationStatus.SENDING)).exists()


@task(singleton_ttl_s=60, idle=_nothing_to_send)
def deliver_pending() -> None:
    """Messages whose delivery failed for a passing reason, or whose message was lost."""
    service.sweep()
