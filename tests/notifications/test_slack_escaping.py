"""Job names and job output are text in Slack, never mentions or links; webhook URLs with
control characters are refused, and a bad stored one is never sent nor logged."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from controlplane.notifications import mrkdwn, service
from controlplane.notifications.models import Notification, SlackChannel
from controlplane.runs.models import Job
from controlplane.teams.models import Team
from tests.notifications.slack_recorder import SlackRecorder
from tests.notifications.test_slack import HOOK, HOOK_PATH, channel

HOSTILE = "<!channel> <https://evil.example/login|Open job> & <@U0001>"


def test_escape_follows_slacks_three_rules() -> None:
    assert mrkdwn.escape("a < b & c > d") == "a &lt; b &amp; c &gt; d"
    assert mrkdwn.escape("<!channel>") == "&lt;!channel&gt;"
    assert mrkdwn.escape("two\nlines\u2028x") == "two lines x"
    assert mrkdwn.escape("x" * 50, limit=10) == "x" * 9 + "…"


def test_a_hostile_job_name_and_error_mention_and_link_nothing(
        make_job: Callable[..., Job], team: Team, slack: SlackRecorder) -> None:
    channel(team, ["failed"])
    job = make_job(HOSTILE)
    service.notify(job, "failed", key="f", detail={"state": "FAILED",
                                                   "error": "Traceback\n<!here> <http://x|y>"})
    service.deliver(Notification.objects.get().pk)
    body = slack.to(HOOK_PATH)[0].body
    everything = str(body["blocks"]) + body["text"]
    for raw in ("<!channel>", "<!here>", "<https://evil", "<http://x", "<@U0001>"):
        assert raw not in everything
    assert "&lt;!channel&gt;" in body["blocks"][0]["text"]["text"]
    assert body["blocks"][0]["text"]["text"].startswith(":x: <http")  # our own link stays
    assert body["blocks"][2]["elements"][0]["text"] == "Traceback\n&lt;!here&gt; &lt;http://x|y&gt;"


@pytest.mark.parametrize("bad", [
    HOOK + "\r\nX-Injected: 1",
    HOOK + "\n",
    "https://hooks.slack.com/services/T0001/B0001/abc\tdefghijklmnop",
    "https://hooks.slack.com/services/T0001/B0001/abc defghijklmnop",
    "https://hooks.slack.com/services/T0001/B0001/abcdefghijklmnop?x=1",
])
def test_webhook_urls_with_control_characters_are_refused(client: Client, admin_user: Any,
                                                          team: Team, bad: str) -> None:
    client.force_login(admin_user)
    answer = client.post(f"/api/v1/teams/{team.slug}/channels/", {
        "name": "x", "kind": "webhook", "webhook_url": bad, "notify_on": ["failed"]},
        content_type="application/json")
    if bad == HOOK + "\n":  # surrounding space is trimmed, as everywhere
        assert answer.status_code == 201
        assert SlackChannel.objects.get().get_secret() == HOOK
        return
    assert answer.status_code == 400 and "webhook_url" in answer.json(), answer.content
    assert not SlackChannel.objects.exists()


def test_a_bad_stored_url_is_never_sent_nor_logged(
        make_job: Callable[..., Job], team: Team, slack: SlackRecorder,
        caplog: pytest.LogCaptureFixture) -> None:
    secret = "T0001/B0001/secretsecretsecret"
    bad = channel(team, ["failed"], url=f"https://hooks.slack.com/services/{secret}\r\nX: y")
    service.notify(make_job("exp"), "failed", key="f", detail={"state": "FAILED"})
    with caplog.at_level(logging.DEBUG):
        status = service.deliver(Notification.objects.get().pk)
    assert status == "failed"
    assert not slack.received
    bad.refresh_from_db()
    assert not bad.enabled and "not a valid Slack webhook URL" in bad.disabled_reason
    assert "secretsecret" not in caplog.text
    assert "secretsecret" not in Notification.objects.get().last_error
