"""Sending SLO alerts to the team's Slack channels, through controlplane.notifications' transport.

An SloAlert row is the outbox: a worker claims it with a conditional UPDATE (PENDING ->
SENDING) before sending, so two workers never both send it, and a worker that dies mid-send
leaves it SENDING instead of risking a second message. Each enabled channel of the team gets
one try; transport errors are recorded on the row (a revoked webhook is the channel owner's to
fix, as for job notifications).
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from controlplane.notifications import slack
from controlplane.notifications.models import SlackChannel
from controlplane.serving.models import SloAlert
from controlplane.teams.models import Team

logger = logging.getLogger(__name__)


def send_to_team(team: Team, text: str) -> list[str]:
    """Post `text` to every enabled Slack channel of `team`; the errors, one per failed
    channel. The one place serving alerts leave the product."""
    failures = []
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
    for channel in SlackChannel.objects.filter(team=team, enabled=True):
        try:
            slack.send(channel, text, blocks)
        except Exception as exc:  # TransportError, an unreadable secret: record, go on
            failures.append(f"{channel.name}: {exc}")
    return failures


def deliver(alert_id: int) -> str:
    """Send one alert unless another worker has it or it went already; its delivery status."""
    claimed = SloAlert.objects.filter(pk=alert_id, delivery=SloAlert.Delivery.PENDING).update(
        delivery=SloAlert.Delivery.SENDING)
    alert = SloAlert.objects.select_related("slo__endpoint__team").get(pk=alert_id)
    if claimed != 1:
        return alert.delivery
    failures = send_to_team(alert.slo.endpoint.team, alert.message)
    status = SloAlert.Delivery.FAILED if failures else SloAlert.Delivery.SENT
    SloAlert.objects.filter(pk=alert_id).update(
        delivery=status, delivered_at=timezone.now(), delivery_error="\n".join(failures))
    if failures:
        logger.warning("SLO alert %s: %s", alert_id, "; ".join(failures))
    return status
