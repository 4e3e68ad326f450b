"""What is sent when, and delivering it: an outbox with one row per (channel, transition).

Every message goes through it: a job's transitions (notify), an endpoint's SLO alerts
(notify_slo_alert) and idle clusters (notify_cluster_idle) alike, with the same claim, the
same retries of transient errors and the same permanent errors that disable a channel.

Rows are written in the transaction that makes the transition (so a rolled-back transition
sends nothing, and a committed one is never forgotten), and the (channel, key) constraint
makes a second write of the same transition a no-op. A worker claims a row with a conditional
UPDATE, so two workers never both send it; a worker that dies mid-send leaves the row marked
UNKNOWN rather than risking a second message.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from controlplane.clusters.models import IdleFlag
from controlplane.core import memo
from controlplane.core.queue import send_now
from controlplane.core.secrets import SecretUnreadable
from controlplane.notifications import messages, options, slack
from controlplane.notifications.models import (
    CLUSTER_IDLE,
    SLO_ALERT,
    Notification,
    NotificationStatus,
    NotifyOn,
    SlackChannel,
)
from controlplane.runs import quota
from controlplane.runs.models import Job, JobEvent
from controlplane.serving.models import SloAlert

logger = logging.getLogger(__name__)

# Job states a channel can ask to hear about.
STATE_EVENTS = {
    "RUNNING": NotifyOn.RUNNING,
    "SUCCEEDED": NotifyOn.SUCCEEDED,
    "FAILED": NotifyOn.FAILED,
    "CANCELLED": NotifyOn.CANCELLED,
    "WAITING_FOR_QUOTA": NotifyOn.QUOTA,
}
# A claimed row older than this belongs to a worker that died while sending.
STALE_CLAIM = timedelta(minutes=5)
MAX_BACKOFF_S = 600.0


def on_state_change(job: Job, event: JobEvent) -> None:
    """Called by Job.update_state inside its transaction."""
    new_state = event.data.get("to", "")
    if event.data.get("source") == "admission" and new_state in ("QUEUED", "QUEUED_LOCAL"):
        admitted = new_state == "QUEUED"
        notify(job, NotifyOn.QUEUE, key=f"{'admitted' if admitted else 'stopped'}-"
                                       f"a{job.attempt}",
               detail={"what": "admitted" if admitted else "stopped",
                       "reason": (job.queue or {}).get("reason", ""),
                       "attempt": job.attempt})
        return
    kind = STATE_EVENTS.get(new_state)
    if kind is None:
        return
    # The first RUNNING only: a job running again after a preemption is "recovered"; one
    # quota wait per attempt, however many times Vertex refuses it meanwhile.
    key = {NotifyOn.RUNNING: "running",
           NotifyOn.QUOTA: f"quota-a{job.attempt}"}.get(kind, f"state-{event.pk}")
    detail = {"state": new_state, "from": event.data.get("from", ""),
              "error": event.data.get("error"), "restarts": job.restarts,
              "attempt": job.attempt}
    if kind == NotifyOn.QUOTA:
        detail["note"] = quota.describe(job.quota_wait)
    notify(job, kind, key=key, detail=detail)


def notify(job: Job, event: str, *, key: str, detail: dict[str, Any] | None = None) -> int:
    """Queue one message per channel of the job's team that wants `event`. `key` names the
    transition (unique per job); calling again with the same key adds nothing. Returns how
    many messages were queued now."""
    detail = {"state": job.state, "restarts": job.restarts, "attempt": job.attempt,
              **(detail or {})}
    # Once for a reconcile page's many jobs of one team (controlplane.core.memo).
    enabled = memo.once(("slack-channels", job.team_id), lambda: list(
        SlackChannel.objects.filter(team_id=job.team_id, enabled=True)))
    channels = [channel for channel in enabled if channel.wants(event)]
    return _queue(channels, f"job-{job.pk}:{key}", job=job, event=event, detail=detail)


def notify_slo_alert(alert: SloAlert) -> int:
    """Queue an SLO alert for every enabled channel of the endpoint's team (whatever their
    notify_on: alerts are not a job's events). Called inside the transaction that records
    the alert; calling again adds nothing. Returns how many messages were queued now."""
    channels = SlackChannel.objects.filter(team_id=alert.slo.endpoint.team_id, enabled=True)
    return _queue(list(channels), f"slo-alert-{alert.pk}", slo_alert=alert, event=SLO_ALERT)


def notify_cluster_idle(flag: IdleFlag, deleted: dict[str, int] | None = None) -> int:
    """Queue one message per enabled channel of the cluster's team for one idle period (the
    flag), whatever their notify_on: an idle cluster costs money whichever jobs a channel
    follows. Called inside the transaction that records the flag; calling again adds nothing.
    `deleted` (idle_minutes, policy_minutes): the team's policy deleted it, a message of its own."""
    channels = SlackChannel.objects.filter(team_id=flag.cluster.team_id, enabled=True)
    key = f"cluster-idle-{flag.pk}" + ("-deleted" if deleted else "")
    return _queue(list(channels), key, idle_flag=flag, event=CLUSTER_IDLE,
                  detail=deleted or {})


def _queue(channels: list[SlackChannel], key: str, **row: Any) -> int:
    """One outbox row per channel under `key`, and their sends once the transaction commits."""
    queued: list[int] = []
    for channel in channels:
        try:
            with transaction.atomic():
                made, created = Notification.objects.get_or_create(
                    channel=channel, key=key, defaults=row)
        except IntegrityError:
            continue  # written concurrently by another worker: theirs is the one
        if created:
            queued.append(made.pk)
    if queued:
        transaction.on_commit(lambda: _enqueue(queued), robust=True)
    return len(queued)


SEND_TASK = "controlplane.notifications.tasks.send_notification"


def _enqueue(ids: list[int], countdown: float | None = None) -> None:
    for pk in ids:
        send_now(SEND_TASK, str(pk), countdown=countdown)


def deliver(notification_id: int) -> str:
    """Send one queued message if it is due and nobody else has it. Returns its status."""
    now = timezone.now()
    claimed = Notification.objects.filter(
        pk=notification_id, status=NotificationStatus.PENDING, next_try_at__lte=now,
    ).update(status=NotificationStatus.SENDING, claimed_at=now)
    row = Notification.objects.select_related(
        "channel", "job", "job__team", "slo_alert", "idle_flag__cluster__team").get(
        pk=notification_id)
    if claimed != 1:
        return row.status
    channel = row.channel
    row.tries += 1
    if not channel.enabled:
        return _finish(row, NotificationStatus.FAILED,
                       f"channel disabled: {channel.disabled_reason}")
    text, blocks = messages.build(row)
    try:
        slack.send(channel, text, blocks)
    except SecretUnreadable as exc:
        _disable(channel, str(exc))
        return _finish(row, NotificationStatus.FAILED, str(exc))
    except slack.TransportError as exc:
        if exc.disable_channel:
            _disable(channel, exc.message)
        if exc.permanent:
            return _finish(row, NotificationStatus.FAILED, exc.message)
        return _retry_later(row, exc)
    SlackChannel.objects.filter(pk=channel.pk).update(last_sent_at=timezone.now())
    return _finish(row, NotificationStatus.SENT, "")


def _finish(row: Notification, status: str, error: str) -> str:
    Notification.objects.filter(pk=row.pk).update(
        status=status, tries=row.tries, last_error=error,
        sent_at=timezone.now() if status == NotificationStatus.SENT else None,
    )
    if status == NotificationStatus.FAILED:
        logger.warning("notification %s to channel %s failed: %s", row.pk, row.channel_id, error)
    return status


def _retry_later(row: Notification, exc: slack.TransportError) -> str:
    if row.tries >= options.get("CP_NOTIFY_MAX_TRIES"):
        return _finish(row, NotificationStatus.FAILED, f"gave up after {row.tries} tries: {exc}")
    # Exponential backoff with jitter (half to all of it); Slack's Retry-After wins when it
    # asks for longer.
    delay = random.uniform(0.5, 1.0) * min(MAX_BACKOFF_S, 2.0 ** row.tries)
    delay = max(delay, exc.retry_after_s or 0.0)
    Notification.objects.filter(pk=row.pk).update(
        status=NotificationStatus.PENDING, tries=row.tries, last_error=exc.message,
        next_try_at=timezone.now() + timedelta(seconds=delay),
    )
    transaction.on_commit(lambda: _enqueue([row.pk], countdown=delay), robust=True)
    return NotificationStatus.PENDING


def _disable(channel: SlackChannel, reason: str) -> None:
    SlackChannel.objects.filter(pk=channel.pk, enabled=True).update(
        enabled=False, disabled_reason=reason, disabled_at=timezone.now())
    channel.enabled = False
    logger.warning("Slack channel %s (%s) disabled: %s", channel.pk, channel.name, reason)


def sweep(limit: int = 200) -> int:
    """Queue the due messages whose task was lost (a broker restart, a killed worker) and give
    up on claims left by dead workers. Run from the periodic reconcile sweep."""
    now = timezone.now()
    Notification.objects.filter(status=NotificationStatus.SENDING,
                                claimed_at__lt=now - STALE_CLAIM).update(
        status=NotificationStatus.UNKNOWN,
        last_error="the worker stopped while sending; not resent, so it is never sent twice")
    due = list(Notification.objects.filter(
        status=NotificationStatus.PENDING, next_try_at__lte=now - timedelta(seconds=5),
    ).values_list("pk", flat=True)[:limit])
    _enqueue(due)
    return len(due)
