"""A failed job's Slack message leads with the diagnosis: the cause and the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controlplane.runs.models import Job
from controlplane.teams.models import Team
from tests.fakes import FakeBackend
from tests.logs.test_diagnosis import oom_job
from tests.notifications.slack_recorder import SlackRecorder
from tests.notifications.test_slack import HOOK_PATH, channel


def test_the_slack_message_carries_the_cause_and_the_fix(
        make_job: Callable[..., Job], backend: FakeBackend, team: Team, slack: SlackRecorder,
        eager: None, django_capture_on_commit_callbacks: Any) -> None:
    channel(team, ["failed"])
    with django_capture_on_commit_callbacks(execute=True):
        job = oom_job(make_job, backend)
    (message,) = slack.to(HOOK_PATH)
    assert message.body["text"].endswith(": GPU out of memory")
    texts = " ".join(b.get("text", {}).get("text", "") for b in message.body["blocks"]
                     if b["type"] == "section")
    assert "CUDA out of memory" in texts and "*Fix:* Lower the per-device batch size" in texts
    assert job.pk
