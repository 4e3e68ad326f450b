"""Fixtures for the survival unit tests: a scripted backend, jobs made through the lifecycle,
tasks run eagerly and the Slack recorder pointed at (tests/stacks.py holds the recorder and the
integration tests' survival stack)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from config.celery import app as celery_app
from controlplane.compose import submission, validation
from controlplane.runs.models import Job
from controlplane.teams.models import Membership, Role, Team
from tests.fakes import FakeBackend
from tests.notifications import slack_recorder

# --- unit tests ---------------------------------------------------------------------------

@pytest.fixture
def admin_user(team: Team) -> Any:
    user = get_user_model().objects.create_user(username="ada")
    Membership.objects.create(user=user, team=team, role=Role.ADMIN)
    return user


@pytest.fixture
def make_job(team: Team, admin_user: Any, backend: FakeBackend,
             django_capture_on_commit_callbacks: Any) -> Callable[..., Job]:
    """A job made through the lifecycle; its queued submission is captured, not run."""

    def make(name: str = "exp", *, spot: bool = False, **extra: Any) -> Job:
        body = {"name": name, "spot": spot, "chief": {"machine_type": "n1-standard-4"},
                "workers": {"replica_count": 1}, **extra}
        checked = validation.check(validation.read_request(body), team)
        assert checked.ok, checked.errors
        with django_capture_on_commit_callbacks(execute=False):
            return submission.create_job(team=team, user=admin_user, checked=checked)

    return make


@pytest.fixture
def eager() -> Iterator[None]:
    """Tasks run in the test's process, at once (countdowns are ignored)."""
    before = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = before


@pytest.fixture
def slack(recorder: slack_recorder.SlackRecorder, settings: Any
          ) -> Iterator[slack_recorder.SlackRecorder]:
    """The recorder, with the Slack transport pointed at it and nothing recorded yet."""
    recorder.clear()
    settings.CP_SLACK_WEBHOOK_BASE_URL = recorder.url
    settings.CP_SLACK_API_URL = recorder.url + "api/"
    yield recorder
    recorder.clear()
