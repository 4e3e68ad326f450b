"""The prober's rate and claims, and the SLO: one alert for a breach, one for the recovery,
however many evaluations and workers there are."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.backends import errors
from controlplane.notifications import service
from controlplane.notifications.models import Notification, SlackChannel
from controlplane.runs.models import Job
from controlplane.serving import prober, slo
from controlplane.serving.models import Endpoint, LatencySample, Slo, SloAlert
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry


@pytest.fixture
def live(fake: FakeServing, queued: list, trained_job: Job, member: Any) -> Endpoint:
    from controlplane.serving import lifecycle

    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member, probe_interval_s=5.0)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    endpoint.refresh_from_db()
    return endpoint


def test_each_slot_is_probed_once_at_the_endpoint_s_rate(live: Endpoint, queued: list) -> None:
    now = timezone.now()
    assert prober.dispatch(now) == 1
    assert prober.dispatch(now) == 0  # the slot is taken
    assert prober.dispatch(now + timedelta(seconds=4)) == 0
    assert prober.dispatch(now + timedelta(seconds=5)) == 1
    assert [q for q in queued if q[0] == "probe_endpoint"] == [
        ("probe_endpoint", (str(live.pk),))] * 2
    # A stale claim (another dispatcher read the same row) loses.
    stale = Endpoint.objects.get(pk=live.pk)
    assert prober.claim(stale, now + timedelta(seconds=10))
    assert not prober.claim(stale, now + timedelta(seconds=10))


def test_nothing_deployed_means_nothing_probed(fake: FakeServing, queued: list,
                                               trained_job: Job, member: Any) -> None:
    ready_endpoint(trained_job.team, member)
    assert prober.dispatch() == 0


def test_a_probe_records_latency_or_the_error(live: Endpoint, fake: FakeServing) -> None:
    sample = prober.probe(live.pk)
    assert sample is not None and sample.ok and sample.latency_ms >= 0
    assert sample.deployed_model_id == str(live.deployments.get().pk)
    fake.predict_error = errors.TransientBackendError("Predict: DeadlineExceeded: too slow")
    failed = prober.probe(live.pk)
    assert failed is not None and not failed.ok and "DeadlineExceeded" in failed.error


def _samples(endpoint: Endpoint, latencies: list[float], at: Any, ok: bool = True) -> None:
    LatencySample.objects.bulk_create(
        LatencySample(endpoint=endpoint, latency_ms=ms, ok=ok,
                      at=at - timedelta(milliseconds=10 * i))
        for i, ms in enumerate(latencies))


def _channel(endpoint: Endpoint, name: str, enabled: bool = True) -> SlackChannel:
    # notify_on lists none: SLO alerts go to every enabled channel, whatever it chose.
    channel = SlackChannel(team=endpoint.team, name=name, kind="webhook", enabled=enabled,
                           notify_on=[])
    channel.set_secret(f"https://hooks.slack.com/services/T0/B0/{name}")
    channel.save()
    return channel


def test_a_breach_and_its_recovery_alert_once_each(
        live: Endpoint, queued: list, django_capture_on_commit_callbacks: Any) -> None:
    _channel(live, "ops")
    objective = Slo.objects.create(endpoint=live, p95_ms=200, error_rate=0.1, window_s=60,
                                   min_samples=5)
    now = timezone.now()
    _samples(live, [50.0] * 3, now)
    assert slo.evaluate(live.pk, now) is None  # too few probes to judge

    _samples(live, [50.0] * 10, now)
    assert slo.evaluate(live.pk, now) is None  # holding: nothing to say

    slow = now + timedelta(seconds=61)
    _samples(live, [900.0] * 10, slow)
    with django_capture_on_commit_callbacks(execute=True):
        breach = slo.evaluate(live.pk, slow)
        again = [slo.evaluate(live.pk, slow + timedelta(seconds=s)) for s in (1, 2, 3)]
    assert breach is not None and breach.kind == SloAlert.Kind.BREACH
    assert again == [None, None, None]
    assert "SLO breached" in breach.message and "p95 900 ms (target 200 ms)" in breach.message
    objective.refresh_from_db()
    assert objective.status == Slo.Status.BREACHED and objective.last_samples == 10

    fast = slow + timedelta(seconds=61)
    _samples(live, [40.0] * 10, fast)
    with django_capture_on_commit_callbacks(execute=True):
        recovery = slo.evaluate(live.pk, fast)
        assert slo.evaluate(live.pk, fast) is None
    assert recovery is not None and recovery.kind == SloAlert.Kind.RECOVERY
    assert list(SloAlert.objects.values_list("kind", flat=True).order_by("at")) == [
        "BREACH", "RECOVERY"]
    # Each alert is one row of the notifications outbox for the channel, sent once committed.
    rows = list(Notification.objects.order_by("pk"))
    assert [(r.slo_alert_id, r.job_id, r.event) for r in rows] == [
        (breach.pk, None, "slo"), (recovery.pk, None, "slo")]
    assert [q for q in queued if q[0] == "send_notification"] == [
        ("send_notification", (str(r.pk),)) for r in rows]


def test_the_error_rate_breaches_too(live: Endpoint, queued: list) -> None:
    Slo.objects.create(endpoint=live, p95_ms=1000, error_rate=0.2, window_s=60, min_samples=5)
    now = timezone.now()
    _samples(live, [10.0] * 7, now)
    _samples(live, [5.0] * 3, now, ok=False)  # 30% failed
    alert = slo.evaluate(live.pk, now)
    assert alert is not None and alert.kind == SloAlert.Kind.BREACH
    assert alert.error_rate == pytest.approx(0.3)


def test_a_losing_worker_records_no_second_alert(live: Endpoint, queued: list) -> None:
    objective = Slo.objects.create(endpoint=live, p95_ms=100, window_s=60, min_samples=1)
    now = timezone.now()
    _samples(live, [500.0] * 5, now)
    # Another worker changed the status between this worker's read and its update.
    stale = Slo.objects.select_related("endpoint__team").get(pk=objective.pk)
    Slo.objects.filter(pk=objective.pk).update(status=Slo.Status.BREACHED)
    assert slo._transition(stale, Slo.Status.BREACHED, slo.measure(stale, now), now) is None
    assert not SloAlert.objects.exists()


def _alert(endpoint: Endpoint, message: str = "slow!") -> SloAlert:
    objective = Slo.objects.create(endpoint=endpoint, p95_ms=100)
    return SloAlert.objects.create(slo=objective, kind=SloAlert.Kind.BREACH, message=message)


def test_an_alert_goes_to_every_enabled_channel_once(
        live: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    from controlplane.notifications import slack

    for name, enabled in (("ops", True), ("ml", True), ("old", False)):
        _channel(live, name, enabled)
    posted: list[tuple[str, str, list]] = []
    monkeypatch.setattr(slack, "send", lambda channel, text, blocks: posted.append(
        (channel.name, text, blocks)))
    alert = _alert(live)
    assert alert.delivery is None  # nothing queued yet
    assert service.notify_slo_alert(alert) == 2
    assert service.notify_slo_alert(alert) == 0  # announced twice: queued once
    assert alert.delivery == SloAlert.Delivery.PENDING
    for row in Notification.objects.filter(slo_alert=alert):
        assert service.deliver(row.pk) == "sent"
        assert service.deliver(row.pk) == "sent"  # a redelivered task
    section = [{"type": "section", "text": {"type": "mrkdwn", "text": "slow!"}}]
    assert sorted(posted) == [("ml", "slow!", section), ("ops", "slow!", section)]
    assert alert.delivery == SloAlert.Delivery.SENT and alert.delivered_at is not None
    assert alert.delivery_error == ""


def test_a_channel_that_fails_is_recorded(live: Endpoint,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from controlplane.notifications import slack

    _channel(live, "ops")

    def refuse(*_: Any) -> None:
        raise slack.TransportError("Slack refused the channel: 404 no_service", permanent=True)

    monkeypatch.setattr(slack, "send", refuse)
    alert = _alert(live, "m")
    service.notify_slo_alert(alert)
    assert service.deliver(Notification.objects.get(slo_alert=alert).pk) == "failed"
    assert alert.delivery == SloAlert.Delivery.FAILED
    assert alert.delivery_error == "ops: Slack refused the channel: 404 no_service"


def test_the_alerts_api_shows_the_delivery(live: Endpoint, member: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from django.test import Client

    from controlplane.notifications import slack

    _channel(live, "ops")
    monkeypatch.setattr(slack, "send", lambda *_: None)
    quiet = _alert(live, "nobody to tell")  # never queued: no outbox row, no delivery
    alert = SloAlert.objects.create(slo=quiet.slo, kind=SloAlert.Kind.RECOVERY, message="ok")
    service.notify_slo_alert(alert)
    service.deliver(Notification.objects.get(slo_alert=alert).pk)
    client = Client()
    client.force_login(member)
    body = client.get(f"/api/v1/serving/endpoints/{live.pk}/alerts/").json()
    assert [(a["kind"], a["delivery"], a["delivery_error"]) for a in body["results"]] == [
        ("RECOVERY", "SENT", ""), ("BREACH", None, "")]
    assert body["results"][0]["delivered_at"] is not None


def test_old_samples_are_pruned(live: Endpoint) -> None:
    now = timezone.now()
    _samples(live, [10.0], now - timedelta(days=30))
    _samples(live, [10.0], now)
    assert prober.prune(now) == 1
    assert live.latency_samples.count() == 1
