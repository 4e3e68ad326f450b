"""Fixtures for the survival tests: a scripted backend and jobs made through the lifecycle for
the unit tests; a Slack recorder; and, for the integration tests, the real stack (PostgreSQL,
Redis, the emulator, a worker, beat, gunicorn) with short recovery backoffs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.contrib.auth import get_user_model

from config.celery import app as celery_app
from config.devstack import Stack, StackConfig, free_port
from controlplane.compose import submission, validation
from controlplane.runs.models import Job
from controlplane.teams.models import Membership, Role, Team
from tests.fakes import FakeBackend
from tests.integration.conftest import Api, _database
from tests.notifications import slack_recorder

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
# A job that does nothing for a moment: the chaos and service-restart tests run many of them.
SLEEP_COMMAND = ["python", "-c", "import time; time.sleep(1)"]


def sleeping_job(name: str, seconds: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": ["python", "-c", f"import time; time.sleep({seconds})"],
            "args": [], "chief": {"machine_type": "n1-standard-4"}, **extra}


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


@pytest.fixture(scope="session")
def recorder() -> Iterator[slack_recorder.SlackRecorder]:
    server = slack_recorder.start()
    yield server
    server.close()


@pytest.fixture
def slack(recorder: slack_recorder.SlackRecorder, settings: Any
          ) -> Iterator[slack_recorder.SlackRecorder]:
    """The recorder, with the Slack transport pointed at it and nothing recorded yet."""
    recorder.clear()
    settings.CP_SLACK_WEBHOOK_BASE_URL = recorder.url
    settings.CP_SLACK_API_URL = recorder.url + "api/"
    yield recorder
    recorder.clear()


# --- integration tests --------------------------------------------------------------------

class SurvivalStack(Stack):
    """The stack, with emulator flags of its own (a short default preemption notice)."""

    def __init__(self, config: StackConfig, emulator_flags: list[str]) -> None:
        super().__init__(config)
        self.emulator_flags = emulator_flags

    def commands(self) -> dict[str, list[str]]:
        commands = super().commands()
        commands["emulator"] = [*commands["emulator"], *self.emulator_flags]
        return commands

    @property
    def emulator_addr(self) -> str:
        return f"127.0.0.1:{self.config.emulator_port}"


def new_stack(postgres_url: str, broker_url: str, var_dir: Path, extra_env: dict[str, str]
              ) -> tuple[SurvivalStack, str]:
    name = f"cp_sv_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    stack = SurvivalStack(StackConfig(
        var_dir=var_dir, database_url=_database(postgres_url, name), broker_url=broker_url,
        web_port=free_port(), emulator_port=free_port(),
        queue_prefix=f"cp-sv-{uuid.uuid4().hex[:6]}",
        reconcile_interval_s=1.0, follow_interval_s=1.0,
        extra_env={"CP_RESUBMIT_AFTER_S": "5", "CP_RECOVERY_BACKOFF_S": "1",
                   "CP_RECOVERY_BACKOFF_CAP_S": "5",
                   "CP_RECOVERY_FALLBACK": "FLEX_START,STANDARD",
                   "CP_QUOTA_RETRY_S": "1", "CP_QUOTA_RETRY_CAP_S": "3",
                   "CP_QUOTA_CACHE_S": "0", **extra_env},
    ), emulator_flags=["--preempt-grace", "20"])
    return stack, name


def drop_database(postgres_url: str, name: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def survival_stack(postgres_url: str, redis_url: str, recorder: slack_recorder.SlackRecorder,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[SurvivalStack]:
    stack, name = new_stack(postgres_url, redis_url, tmp_path_factory.mktemp("survival"),
                            {"CP_SLACK_WEBHOOK_BASE_URL": recorder.url,
                             "CP_SLACK_API_URL": recorder.url + "api/"})
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        drop_database(postgres_url, name)


@pytest.fixture(scope="session")
def survival_seeded(survival_stack: SurvivalStack) -> dict[str, Any]:
    return json.loads(survival_stack.manage("seed_demo", "--username", "sam", "--team", "speech",
                                            capture=True))


@pytest.fixture(scope="session")
def survival_api(survival_stack: SurvivalStack, survival_seeded: dict[str, Any]) -> Api:
    return Api(survival_stack.web_url, survival_seeded["token"])
