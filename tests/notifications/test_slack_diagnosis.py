"""A failed job's Slack message leads with the diagnosis: the cause and the fix, the fix being
the job page's own line (controlplane/runs/fix_line.py): one change to this job's request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controlplane.runs.models import Job
from controlplane.teams.models import Team
from tests.fakes import FakeBackend
from tests.logs.test_diagnosis import oom_job
from tests.notifications.slack_recorder import SlackRecorder
from tests.notifications.test_slack import HOOK_PATH, channel


def sections(message: Any) -> str:
    return " ".join(b.get("text", {}).get("text", "") for b in message.body["blocks"]
                    if b["type"] == "section")


def test_the_slack_message_carries_the_cause_and_the_jobs_own_fix(
        make_job: Callable[..., Job], backend: FakeBackend, team: Team, slack: SlackRecorder,
        eager: None, django_capture_on_commit_callbacks: Any) -> None:
    channel(team, ["failed"])
    with django_capture_on_commit_callbacks(execute=True):
        job = oom_job(lambda name: make_job(name, batch={"micro_batch_size": 4}), backend)
    (message,) = slack.to(HOOK_PATH)
    assert message.body["text"].endswith(": GPU out of memory")
    texts = sections(message)
    assert "CUDA out of memory" in texts
    # The page's line, not the kind's general advice ("Lower the per-device batch size").
    assert "*Fix:* set batch.micro_batch_size to 2 (it is 4;" in texts, texts
    assert "Lower the per-device batch size" not in texts
    assert job.pk


def test_without_a_change_in_the_request_the_general_advice_stays(
        make_job: Callable[..., Job], backend: FakeBackend, team: Team, slack: SlackRecorder,
        eager: None, django_capture_on_commit_callbacks: Any) -> None:
    """A job already at the most memory-saving settings the request names (full activation
    checkpointing, FSDP, no accelerator to swap): the fix is the kind's advice, as on the page."""
    channel(team, ["failed"])
    with django_capture_on_commit_callbacks(execute=True):
        oom_job(lambda name: make_job(name, strategy="fsdp",
                                      model={"activation_checkpointing": "full"}), backend)
    (message,) = slack.to(HOOK_PATH)
    assert "*Fix:* Lower the per-device batch size" in sections(message)
