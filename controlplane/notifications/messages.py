"""Block Kit for one notification: for a job, its team, new state, restarts, cost so far and a
link; for an SLO alert, the alert's own message; for an idle cluster, which one, idle since
when, what it costs per hour, and a link."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from controlplane.clusters.models import IdleFlag
from controlplane.logs import queries
from controlplane.notifications import mrkdwn
from controlplane.notifications.models import Notification, NotifyOn
from controlplane.runs import fix_line
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
    NotifyOn.QUOTA: ":hourglass_flowing_sand:", NotifyOn.QUEUE: ":vertical_traffic_light:",
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
        return f"is now *{_esc(detail.get('state', event.upper()))}*"
    if event == NotifyOn.SUBMITTED:
        return f"was submitted to Vertex AI as `{_esc(detail.get('vertex_name', ''))}`"
    if event == NotifyOn.PREEMPTED:
        where = _esc(detail.get("replica") or "the job")
        step = detail.get("step")
        at = f" at step {_esc(step)}" if step is not None else ""
        return f"had a *{_esc(detail.get('cause', 'preemption'))}* ({where}{at})"
    if event == NotifyOn.RECOVERED:
        return f"*recovered*: {_esc(detail.get('how', 'running again'))}"
    if event == NotifyOn.QUOTA:
        return ("is *waiting for quota*: "
                f"{_esc(detail.get('note') or 'Vertex refused it for quota')}")
    if event == NotifyOn.QUEUE:
        if detail.get("what") == "admitted":
            return "was *admitted* from the queue and goes to Vertex AI"
        if detail.get("what") == "waiting":
            start = detail.get("earliest_start")
            return (f"has *waited {_esc(detail.get('waited_min'))} minutes* in the queue "
                    f"(your team's limit: {_esc(detail.get('limit_min'))}), place "
                    f"{_esc(detail.get('place'))}: {_esc(detail.get('reason') or 'waiting')}"
                    + (f"; it could start at {_esc(start)} at the earliest" if start else ""))
        return (f"was *stopped at a checkpoint* for another team: "
                f"{_esc(detail.get('reason') or 'its team was borrowing')}; it resumes from "
                "its checkpoint when its team's share allows")
    if event == NotifyOn.BUDGET:
        return f"*budget alert*: {_esc(detail.get('message', 'over budget'))}"
    return _esc(event)


def build(notification: Notification) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) for a notification."""
    if notification.slo_alert_id is not None:
        return slo_alert(notification.slo_alert.message)
    if notification.idle_flag_id is not None:
        if notification.detail.get("policy_minutes"):
            return cluster_deleted(notification.idle_flag, notification.detail)
        return cluster_idle(notification.idle_flag)
    return job_transition(notification)


def slo_alert(text: str) -> tuple[str, list[dict[str, Any]]]:
    return mrkdwn.plain(text), [{"type": "section",
                                 "text": {"type": "mrkdwn", "text": _esc(text)}}]


def cluster_url(flag: IdleFlag) -> str:
    return settings.CP_BASE_URL + reverse("clusters-detail", args=[flag.cluster_id])


def cluster_idle(flag: IdleFlag) -> tuple[str, list[dict[str, Any]]]:
    cluster = flag.cluster
    url = cluster_url(flag)
    since = flag.idle_since.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    hours = (flag.flagged_at - flag.idle_since).total_seconds() / 3600
    hourly = format_usd(flag.hourly_micros) if flag.hourly_micros else UNKNOWN_COST
    # The cluster's and the team's names are the users': escaped, so they link to nothing.
    line = (f":zzz: Cluster <{url}|{_esc(cluster.name)}> of {_esc(cluster.team.name)} has "
            f"been *idle since {since}* ({hours:.1f} h) and costs *{hourly} per hour* while "
            "it exists, busy or not. Delete it if nothing will run on it.")
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": line}},
        {"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open cluster"},
             "url": url}]},
    ]
    text = mrkdwn.plain(f"Cluster {cluster.name} has been idle since {since} and costs "
                        f"{hourly} per hour")
    return text, blocks


def cluster_deleted(flag: IdleFlag, detail: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The team's policy deleted an idle cluster: how long it was idle, and the limit."""
    cluster = flag.cluster
    why = (f"deleted after {int(detail['idle_minutes'])} minutes idle, team policy "
           f"{int(detail['policy_minutes'])}")
    line = (f":wastebasket: Cluster <{cluster_url(flag)}|{_esc(cluster.name)}> of "
            f"{_esc(cluster.team.name)} was *{why}*. Its cost stops once Vertex has removed it.")
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": line}}]
    return mrkdwn.plain(f"Cluster {cluster.name} was {why}"), blocks


def job_transition(notification: Notification) -> tuple[str, list[dict[str, Any]]]:
    job = notification.job
    detail = notification.detail
    url = job_url(job)
    emoji = _EMOJI.get(notification.event, ":bell:")
    # Every value from a user or a job's output is escaped (mrkdwn.py): a job named
    # "<!channel>" or "<https://evil|Open job>" shows as written and pings or links nothing.
    line = f"{emoji} <{url}|{_esc(job.name)} #{job.pk}> {headline(notification)}"
    fields = [
        ("Team", _esc(job.team.name)),
        ("State", _esc(detail.get("state") or job.state)),
        ("Restarts", _esc(detail.get("restarts", job.restarts))),
        ("Cost so far", cost_so_far(job)),
        ("Attempt", _esc(detail.get("attempt", job.attempt))),
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": line}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{name}*\n{value}"}
                                       for name, value in fields]},
    ]
    diagnosis = queries.headline(job) if notification.event == NotifyOn.FAILED else None
    if diagnosis:
        # The cause and the fix first: "non-zero status of 1" alone sends nobody anywhere.
        # The fix is the job page's own line: one change to this job's request where the
        # request explains the failure, the general advice otherwise.
        fix = fix_line.for_failure(diagnosis, job.request, job.custom_job, job.region)
        # Each part escaped and clipped on its own: a clip never cuts an entity in two.
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": (
            f"*{_esc(diagnosis['title'], 200)}*: `{_esc(diagnosis['summary'], 2000)}`\n"
            f"*Fix:* {_esc(fix.text, 600)}")}})
    note = detail.get("error") or detail.get("note")
    if note:
        blocks.append({"type": "context",
                       "elements": [{"type": "mrkdwn", "text": mrkdwn.escape(
                           note, limit=2900, multiline=True)}]})
    blocks.append({"type": "actions", "elements": [
        {"type": "button", "text": {"type": "plain_text", "text": "Open job"}, "url": url},
    ]})
    text = mrkdwn.plain(f"{job.name} #{job.pk} {headline(notification)}").replace("*", "")
    if diagnosis:
        text += f": {mrkdwn.plain(diagnosis['title'])}"
    return text, blocks


def _esc(value: object, limit: int | None = None) -> str:
    return mrkdwn.escape(value, limit=limit)
