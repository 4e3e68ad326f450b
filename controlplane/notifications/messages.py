"""Block Kit for one notification: for a job, its team, new state, restarts, cost so far and a
link; for an SLO alert, the alert's own message."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from controlplane.notifications.models import Notification, NotifyOn
from controlplane.runs.models import Job
from vertexplan.pricing import PricingError, format_usd, job_estimate
from vertexplan.pricing.money import cost_of_seconds

logger = logging.getLogger(__name__)

UNKNOWN_COST = "n/a"
_EMOJI = {
    NotifyOn.SUBMITTED: ":outbox_tray:", NotifyOn.RUNNING: ":arrow_forward:",
    NotifyOn.SUCCEEDED: ":white_check_mark:", NotifyOn.FAILED: ":x:",
    NotifyOn.CANCELLED: ":no_entry_sign:", NotifyOn.PREEMPTED: ":warning:",
    NotifyOn.RECOVERED: ":recycle:", NotifyOn.BUDGET: ":moneybag:",
}


def job_url(job: Job) -> str:
    return settings.CP_BASE_URL + reverse("job-detail", args=[job.pk])


def cost_so_far(job: Job, now: datetime | None = None) -> str:
    """Billed running time of every attempt at the rate of its scheduling strategy, or 'n/a'
    when the job cannot be priced (an unknown machine, or no price for its region)."""
    now = now or timezone.now()
    try:
        estimate = job_estimate.hourly(job.custom_job, job.region)
    except (PricingError, ValueError, KeyError) as exc:
        logger.debug("job %s cannot be priced: %s", job.pk, exc)
        return UNKNOWN_COST
    total = 0
    for attempt in job.attempts.all():
        if attempt.started_at is None:
            continue  # Vertex bills nothing while queued
        rate = estimate.rate(attempt.scheduling or None)
        if rate is None:
            return UNKNOWN_COST
        billed = max((attempt.ended_at or now) - attempt.started_at, timedelta(0))
        total += cost_of_seconds(rate, billed)
    return format_usd(total)


def headline(notification: Notification) -> str:
    detail = notification.detail
    event = notification.event
    if event in (NotifyOn.RUNNING, NotifyOn.SUCCEEDED, NotifyOn.FAILED, NotifyOn.CANCELLED):
        return f"is now *{detail.get('state', event.upper())}*"
    if event == NotifyOn.SUBMITTED:
        return f"was submitted to Vertex AI as `{detail.get('vertex_name', '')}`"
    if event == NotifyOn.PREEMPTED:
        where = detail.get("replica") or "the job"
        step = detail.get("step")
        at = f" at step {step}" if step is not None else ""
        return f"had a *{detail.get('cause', 'preemption')}* ({where}{at})"
    if event == NotifyOn.RECOVERED:
        return f"*recovered*: {detail.get('how', 'running again')}"
    if event == NotifyOn.BUDGET:
        return f"*budget alert*: {detail.get('message', 'over budget')}"
    return event


def build(notification: Notification) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) for a notification."""
    if notification.slo_alert_id is not None:
        return slo_alert(notification.slo_alert.message)
    return job_transition(notification)


def slo_alert(text: str) -> tuple[str, list[dict[str, Any]]]:
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]


def job_transition(notification: Notification) -> tuple[str, list[dict[str, Any]]]:
    job = notification.job
    detail = notification.detail
    url = job_url(job)
    emoji = _EMOJI.get(notification.event, ":bell:")
    line = f"{emoji} <{url}|{job.name} #{job.pk}> {headline(notification)}"
    fields = [
        ("Team", job.team.name),
        ("State", detail.get("state") or job.state),
        ("Restarts", str(detail.get("restarts", job.restarts))),
        ("Cost so far", cost_so_far(job)),
        ("Attempt", str(detail.get("attempt", job.attempt))),
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": line}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{name}*\n{value}"}
                                       for name, value in fields]},
    ]
    note = detail.get("error") or detail.get("note")
    if note:
        blocks.append({"type": "context",
                       "elements": [{"type": "mrkdwn", "text": _clip(str(note), 2900)}]})
    blocks.append({"type": "actions", "elements": [
        {"type": "button", "text": {"type": "plain_text", "text": "Open job"}, "url": url},
    ]})
    text = f"{job.name} #{job.pk} {headline(notification)}".replace("*", "")
    return text, blocks


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
