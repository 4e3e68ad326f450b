"""SLO evaluation: after every probe, the endpoint's objective is checked over its window.

The SLO holds when, over the last window_s seconds, the p95 of successful probes is at most
p95_ms and the share of failed probes at most error_rate. With fewer than min_samples probes
in the window nothing is decided (the status stays as it was), so a quiet start never alerts.

A change of status is Slo.transition, one conditional UPDATE (from the status read to the new
one): of two workers evaluating at once, one wins and records the alert; the other changes
nothing. So a breach produces exactly one alert, and so does the recovery.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from controlplane.core import signals
from controlplane.serving import stats
from controlplane.serving.models import Slo, SloAlert


def measure(slo: Slo, now: datetime) -> stats.Summary:
    rows = list(slo.endpoint.latency_samples.filter(
        at__gt=now - timedelta(seconds=slo.window_s), at__lte=now,
    ).values_list("latency_ms", "ok"))
    return stats.summarize(rows)


def breached(slo: Slo, summary: stats.Summary) -> bool | None:
    """True / False, or None when there are too few probes to tell."""
    if summary.samples < max(1, slo.min_samples):
        return None
    too_slow = summary.p95_ms is not None and summary.p95_ms > slo.p95_ms
    too_many_errors = (summary.error_rate or 0.0) > slo.error_rate
    return too_slow or too_many_errors


def evaluate(endpoint_id: int, now: datetime | None = None) -> SloAlert | None:
    """Check an endpoint's SLO; the alert recorded when its status changed, else None."""
    now = now or timezone.now()
    slo = Slo.objects.select_related("endpoint", "endpoint__team").filter(
        endpoint_id=endpoint_id, enabled=True).first()
    if slo is None:
        return None
    summary = measure(slo, now)
    Slo.objects.filter(pk=slo.pk).update(
        last_evaluated_at=now, last_p95_ms=summary.p95_ms,
        last_error_rate=summary.error_rate, last_samples=summary.samples)
    verdict = breached(slo, summary)
    if verdict is None:
        return None
    new = Slo.Status.BREACHED if verdict else Slo.Status.OK
    if new == slo.status:
        return None
    return _transition(slo, new, summary, now)


def _transition(slo: Slo, new: str, summary: stats.Summary, now: datetime) -> SloAlert | None:
    with transaction.atomic():
        if not slo.transition(new, at=now):
            return None  # another worker made this change and recorded its alert
        kind = SloAlert.Kind.BREACH if new == Slo.Status.BREACHED else SloAlert.Kind.RECOVERY
        alert = SloAlert.objects.create(
            slo=slo, kind=kind, at=now, p95_ms=summary.p95_ms,
            error_rate=summary.error_rate, samples=summary.samples,
            message=message(slo, kind, summary),
        )
        # The notifications app queues it for the team's channels in this transaction (its
        # outbox), and sends it once this commits.
        signals.slo_alert_raised.send(sender=SloAlert, alert=alert)
    return alert


def message(slo: Slo, kind: str, summary: stats.Summary) -> str:
    endpoint = slo.endpoint
    p95 = "n/a" if summary.p95_ms is None else f"{summary.p95_ms:.0f} ms"
    errors = "n/a" if summary.error_rate is None else f"{summary.error_rate:.1%}"
    head = (f":rotating_light: SLO breached on endpoint {endpoint.name}"
            if kind == SloAlert.Kind.BREACH else
            f":white_check_mark: SLO recovered on endpoint {endpoint.name}")
    url = settings.CP_BASE_URL + reverse("serving-endpoint", args=[endpoint.pk])
    return (f"{head} ({endpoint.team.name}): p95 {p95} (target {slo.p95_ms:g} ms), "
            f"errors {errors} (target {slo.error_rate:.1%}) over the last {slo.window_s} s, "
            f"{summary.samples} probes. {url}")
