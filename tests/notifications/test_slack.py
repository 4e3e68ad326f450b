"""Slack notifications against a local server that records what Slack would receive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from django.utils import timezone

from controlplane.core import secrets
from controlplane.notifications import service
from controlplane.notifications.models import Notification, SlackChannel
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobState
from controlplane.serving.models import Endpoint, Slo, SloAlert
from controlplane.teams.models import Team
from tests.fakes import FakeBackend
from tests.notifications.slack_recorder import SlackRecorder

HOOK = "https://hooks.slack.com/services/T0001/B0001/abcdefghijklmnop"
HOOK_PATH = "/services/T0001/B0001/abcdefghijklmnop"


def channel(team: Team, notify_on: list[str], url: str = HOOK, name: str = "ml") -> SlackChannel:
    made = SlackChannel(team=team, name=name, kind="webhook", notify_on=notify_on)
    made.set_secret(url)
    made.save()
    return made


def run_to_success(job: Job, backend: FakeBackend) -> None:
    lifecycle.submit(job.pk)
    name = job.current_attempt().vertex_name
    backend.set_state(name, "JOB_STATE_RUNNING", start_time=timezone.now())
    lifecycle.reconcile(job.pk)
    lifecycle.reconcile(job.pk)
    backend.set_state(name, "JOB_STATE_SUCCEEDED", end_time=timezone.now())
    lifecycle.reconcile(job.pk)


def test_one_message_per_chosen_transition(make_job: Callable[..., Job], backend: FakeBackend,
                                           team: Team, slack: SlackRecorder, eager: None,
                                           django_capture_on_commit_callbacks: Any) -> None:
    channel(team, ["submitted", "running", "succeeded"])
    other = channel(team, ["failed"], url=HOOK.replace("abcdefgh", "zzzzzzzz"), name="alerts")
    job = make_job("resnet")
    with django_capture_on_commit_callbacks(execute=True):
        run_to_success(job, backend)
        run_to_success(job, backend)  # seen again: nothing new
    bodies = slack.to(HOOK_PATH)
    assert [b.text.split(" ", 2)[2] for b in bodies] == [
        f"was submitted to Vertex AI as `{job.current_attempt().vertex_name}`",
        "is now RUNNING", "is now SUCCEEDED"]
    last = bodies[-1].body
    assert "resnet #" in last["text"]
    section = last["blocks"][1]["fields"]
    texts = {f["text"].split("\n")[0].strip("*"): f["text"].split("\n")[1] for f in section}
    assert texts["Team"] == "Vision" and texts["State"] == "SUCCEEDED"
    assert texts["Restarts"] == "0" and texts["Cost so far"].startswith("$")
    button = last["blocks"][-1]["elements"][0]
    assert button["url"].endswith(f"/jobs/{job.pk}/")
    assert not [r for r in slack.received if r.path != HOOK_PATH], "the failed-only channel"
    assert not other.notifications.exists()


def test_a_transition_is_queued_once_even_if_announced_twice(make_job: Callable[..., Job],
                                                            team: Team) -> None:
    channel(team, ["budget"])
    job = make_job()
    assert service.notify(job, "budget", key="budget-80", detail={"message": "80% spent"}) == 1
    assert service.notify(job, "budget", key="budget-80", detail={"message": "80% spent"}) == 0
    assert Notification.objects.count() == 1


def test_two_workers_never_send_the_same_message(
        make_job: Callable[..., Job], team: Team, slack: SlackRecorder,
        transactional_db: None) -> None:
    """Two workers deliver the same row at the same moment, each on its own connection to
    PostgreSQL. The row is held locked until both wait on it inside their claim (seen in
    pg_stat_activity), so both claims really run at once; one sends."""
    channel(team, ["budget"])
    service.notify(make_job(), "budget", key="b", detail={"message": "over"})
    row = Notification.objects.get()
    start = threading.Barrier(2)
    answers: list[str] = []
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait(timeout=30)
            answers.append(service.deliver(row.pk))
        except BaseException as exc:  # reported by the test's thread
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    with transaction.atomic():
        Notification.objects.select_for_update().get(pk=row.pk)
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while waiting_on_a_lock() < 2:
            assert not failures, failures
            assert time.monotonic() < deadline, "the two claims never waited on the row"
            time.sleep(0.02)
    for thread in threads:
        thread.join(timeout=30)
    assert not failures, failures
    assert sorted(answers) in (["sending", "sent"], ["sent", "sent"]), answers
    assert len(slack.to(HOOK_PATH)) == 1
    row.refresh_from_db()
    assert row.status == "sent" and row.tries == 1


def waiting_on_a_lock() -> int:
    """Sessions waiting, directly or behind another waiting one, for a lock this session
    holds."""
    with connection.cursor() as cursor:
        # Inside a transaction, PostgreSQL answers from one snapshot of the sessions' states
        # unless it is cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT pg_backend_pid()")
        [[me]] = cursor.fetchall()
        cursor.execute("SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity"
                       " WHERE wait_event_type = 'Lock'")
        blocked = dict(cursor.fetchall())
    behind_me = {me}
    while more := {pid for pid, blockers in blocked.items()
                   if pid not in behind_me and behind_me & set(blockers)}:
        behind_me |= more
    return len(behind_me) - 1


@pytest.mark.parametrize(("status", "body"), [(404, "no_service"), (403, "invalid_token"),
                                              (410, "channel_is_archived")])
def test_a_permanent_error_disables_the_channel_and_says_why(
        make_job: Callable[..., Job], team: Team, slack: SlackRecorder, status: int,
        body: str) -> None:
    made = channel(team, ["budget"])
    slack.answer(HOOK_PATH, (status, body))
    job = make_job()
    service.notify(job, "budget", key="b1", detail={"message": "over"})
    assert service.deliver(Notification.objects.get().pk) == "failed"
    made.refresh_from_db()
    assert not made.enabled and body in made.disabled_reason
    assert service.notify(job, "budget", key="b2") == 0, "a disabled channel gets nothing"


def test_transient_errors_are_retried_with_backoff(make_job: Callable[..., Job], team: Team,
                                                  slack: SlackRecorder) -> None:
    channel(team, ["budget"])
    slack.answer(HOOK_PATH, (500, "internal_error"), (429, "rate_limited", {"Retry-After": "7"}))
    service.notify(make_job(), "budget", key="b", detail={"message": "over"})
    row = Notification.objects.get()
    assert service.deliver(row.pk) == "pending"
    row.refresh_from_db()
    assert row.tries == 1 and "500" in row.last_error and row.next_try_at > timezone.now()
    assert service.deliver(row.pk) == "pending", "not due yet"
    Notification.objects.filter(pk=row.pk).update(next_try_at=timezone.now())
    assert service.deliver(row.pk) == "pending"
    row.refresh_from_db()
    assert row.next_try_at >= timezone.now() + timedelta(seconds=6), "Retry-After is honoured"
    Notification.objects.filter(pk=row.pk).update(next_try_at=timezone.now())
    assert service.deliver(row.pk) == "sent"
    assert len(slack.received) == 1 and row.channel.enabled


def test_an_slo_alert_is_retried_and_refused_like_a_job_s_message(
        make_job: Callable[..., Job], team: Team, slack: SlackRecorder) -> None:
    made = channel(team, ["failed"])  # SLO alerts go to every enabled channel
    endpoint = Endpoint.objects.create(team=team, created_by=make_job().created_by,
                                       name="gpt-prod", state=Endpoint.State.READY)
    objective = Slo.objects.create(endpoint=endpoint, p95_ms=100)

    def alert(kind: str, message: str) -> SloAlert:
        return SloAlert.objects.create(slo=objective, kind=kind, message=message)

    breach = alert(SloAlert.Kind.BREACH, ":rotating_light: SLO breached on endpoint gpt-prod")
    slack.answer(HOOK_PATH, (500, "internal_error"))
    assert service.notify_slo_alert(breach) == 1
    row = Notification.objects.get(slo_alert=breach)
    assert service.deliver(row.pk) == "pending"
    row.refresh_from_db()
    assert row.tries == 1 and "500" in row.last_error and row.next_try_at > timezone.now()
    assert breach.delivery == SloAlert.Delivery.PENDING and "500" in breach.delivery_error
    assert service.deliver(row.pk) == "pending", "not due yet"
    Notification.objects.filter(pk=row.pk).update(next_try_at=timezone.now())
    assert service.deliver(row.pk) == "sent"
    [posted] = slack.to(HOOK_PATH)
    assert posted.text == breach.message
    assert posted.body["blocks"] == [
        {"type": "section", "text": {"type": "mrkdwn", "text": breach.message}}]
    assert breach.delivery == SloAlert.Delivery.SENT and breach.delivery_error == ""

    # A permanent refusal fails the message and disables the channel, with the reason.
    recovery = alert(SloAlert.Kind.RECOVERY, ":white_check_mark: SLO recovered")
    slack.answer(HOOK_PATH, (404, "no_service"))
    service.notify_slo_alert(recovery)
    assert service.deliver(Notification.objects.get(slo_alert=recovery).pk) == "failed"
    made.refresh_from_db()
    assert not made.enabled and "no_service" in made.disabled_reason
    assert recovery.delivery == SloAlert.Delivery.FAILED
    assert "no_service" in recovery.delivery_error
    assert service.notify_slo_alert(alert(SloAlert.Kind.BREACH, "again")) == 0, (
        "a disabled channel gets nothing")


def test_a_worker_that_died_while_sending_is_not_resent(make_job: Callable[..., Job],
                                                       team: Team, slack: SlackRecorder) -> None:
    channel(team, ["budget"])
    service.notify(make_job(), "budget", key="b", detail={"message": "over"})
    Notification.objects.update(status="sending", claimed_at=timezone.now() - timedelta(hours=1))
    service.sweep()
    assert Notification.objects.get().status == "unknown"
    assert slack.received == []


def test_bot_token_and_channel(make_job: Callable[..., Job], team: Team,
                               slack: SlackRecorder) -> None:
    bot = SlackChannel(team=team, name="bot", kind="bot", slack_channel="#training",
                       notify_on=["budget"])
    bot.set_secret("xoxb-1234567890-abcdefghijkl")
    bot.save()
    service.notify(make_job(), "budget", key="b", detail={"message": "over"})
    assert service.deliver(Notification.objects.get().pk) == "sent"
    [posted] = slack.to("/api/chat.postMessage")
    assert posted.body["channel"] == "#training"
    assert posted.headers["Authorization"] == "Bearer xoxb-1234567890-abcdefghijkl"

    slack.answer("/api/chat.postMessage", (200, '{"ok": false, "error": "channel_not_found"}'))
    service.notify(Job.objects.get(), "budget", key="b2", detail={"message": "over"})
    assert service.deliver(Notification.objects.get(key__endswith="b2").pk) == "failed"
    bot.refresh_from_db()
    assert not bot.enabled and "channel_not_found" in bot.disabled_reason


def test_secrets_are_encrypted_and_keys_can_be_introduced(team: Team, settings: Any) -> None:
    made = channel(team, ["failed"])
    assert HOOK not in made.secret and "abcdefghijklmnop" not in made.secret_hint
    assert made.get_secret() == HOOK
    settings.CP_ENCRYPTION_KEY = "a dedicated key"
    assert made.get_secret() == HOOK, "written under SECRET_KEY, still readable"
    fresh = secrets.encrypt("x")
    settings.CP_ENCRYPTION_KEY = ""
    with pytest.raises(secrets.SecretUnreadable):
        secrets.decrypt(fresh)


def _api_client(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def test_the_api_never_returns_a_webhook_url(client: Client, admin_user: Any,
                                             team: Team) -> None:
    api = _api_client(client, admin_user)
    url = f"/api/v1/teams/{team.slug}/channels/"
    for bad in ("http://hooks.slack.com/services/T/B/xxxxxxxxxx",
                "https://hooks.slack.com.evil.example/services/T/B/x",
                "https://example.com/services/T0001/B0001/abcdefghijklmnop",
                "https://hooks.slack.com/"):
        response = api.post(url, {"name": "x", "kind": "webhook", "webhook_url": bad,
                                  "notify_on": ["failed"]}, content_type="application/json")
        assert response.status_code == 400 and "webhook_url" in response.json(), bad
    response = api.post(url, {"name": "ml", "kind": "webhook", "webhook_url": HOOK,
                              "notify_on": ["failed", "preempted"]},
                        content_type="application/json")
    assert response.status_code == 201, response.content
    assert HOOK not in response.content.decode() and "abcdefghijklmnop" not in \
        response.content.decode()
    assert response.json()["secret_hint"].startswith("https://hooks.slack.com/")
    listed = api.get(url)
    assert "abcdefghijklmnop" not in listed.content.decode()
    assert "webhook_url" not in listed.json()["results"][0]
    pk = response.json()["id"]
    changed = api.patch(f"{url}{pk}/", {"notify_on": ["failed"]},
                        content_type="application/json")
    assert changed.status_code == 200 and changed.json()["notify_on"] == ["failed"]
    assert SlackChannel.objects.get(pk=pk).get_secret() == HOOK, "kept when not given"


def test_only_team_admins_manage_channels(client: Client, team: Team, make_job: Any) -> None:
    from django.contrib.auth import get_user_model

    from controlplane.teams.models import Membership, Role

    member = get_user_model().objects.create_user(username="mo")
    Membership.objects.create(user=member, team=team, role=Role.MEMBER)
    api = _api_client(client, member)
    url = f"/api/v1/teams/{team.slug}/channels/"
    assert api.get(url).status_code == 200
    response = api.post(url, {"name": "ml", "kind": "webhook", "webhook_url": HOOK,
                              "notify_on": ["failed"]}, content_type="application/json")
    assert response.status_code == 403
    assert api.get("/api/v1/teams/someone-else/channels/").status_code == 404


def test_channel_pages(client: Client, admin_user: Any, team: Team) -> None:
    client.force_login(admin_user)
    page = client.get(f"/teams/{team.slug}/notifications/")
    assert page.status_code == 200 and "No Slack channels yet" in page.content.decode()
    refused = client.post(f"/teams/{team.slug}/notifications/", {
        "name": "ml", "kind": "webhook", "webhook_url": "https://example.com/x",
        "notify_on": ["failed"], "enabled": "on"})
    assert refused.status_code == 400 and "hooks.slack.com" in refused.content.decode()
    added = client.post(f"/teams/{team.slug}/notifications/", {
        "name": "ml", "kind": "webhook", "webhook_url": HOOK, "notify_on": ["failed"],
        "enabled": "on"})
    assert added.status_code == 302
    made = SlackChannel.objects.get()
    made.enabled, made.disabled_reason = False, "Slack refused the channel: 404 no_service"
    made.save()
    listing = client.get(f"/teams/{team.slug}/notifications/").content.decode()
    assert "404 no_service" in listing and "abcdefghijklmnop" not in listing
    edit = client.get(f"/teams/{team.slug}/notifications/{made.pk}/").content.decode()
    assert "abcdefghijklmnop" not in edit
    client.post(f"/teams/{team.slug}/notifications/{made.pk}/", {
        "name": "ml", "kind": "webhook", "webhook_url": "", "notify_on": ["failed", "budget"],
        "enabled": "on"})
    made.refresh_from_db()
    assert made.enabled and made.disabled_reason == "" and made.get_secret() == HOOK


def test_preemptions_and_recoveries_are_announced_once(
        make_job: Callable[..., Job], backend: FakeBackend, team: Team, slack: SlackRecorder,
        eager: None, django_capture_on_commit_callbacks: Any) -> None:
    from tests.logs.test_restart_detection import Log

    channel(team, ["preempted", "recovered"])
    job = make_job(spot=True)
    lifecycle.submit(job.pk)
    backend.set_state(job.current_attempt().vertex_name, "JOB_STATE_RUNNING",
                      start_time=timezone.now())
    log = Log(job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    log.steps(1, 5)
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.reconcile(job.pk)
        log.preemption(5)
        lifecycle.reconcile(job.pk)
        lifecycle.reconcile(job.pk)
    texts = [r.text for r in slack.to(HOOK_PATH)]
    assert len(texts) == 2, texts
    assert "spot preemption" in texts[0] and "at step 5" in texts[0]
    assert "recovered" in texts[1] and "step 5" in texts[1] and "0 steps lost" in texts[1]
    assert Job.objects.get(pk=job.pk).state == JobState.RUNNING
