"""The survival stack: short recovery backoffs and a Slack recorder, shared by this package's
tests (tests/scheduling.py runs their files together on one process) and stopped once the last
of them has run: package scope, so it does not idle beside the rest of the suite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.notifications import slack_recorder
from tests.stacks import Api, SurvivalStack, new_stack, running


@pytest.fixture(scope="package")
def survival_stack(postgres_url: str, redis_url: str, recorder: slack_recorder.SlackRecorder,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[SurvivalStack]:
    stack, name = new_stack(postgres_url, redis_url, tmp_path_factory,
                            {"CP_SLACK_WEBHOOK_BASE_URL": recorder.url,
                             "CP_SLACK_API_URL": recorder.url + "api/"})
    with running(stack, postgres_url, name):
        yield stack


@pytest.fixture(scope="package")
def survival_seeded(survival_stack: SurvivalStack) -> dict[str, Any]:
    return json.loads(survival_stack.manage("seed_demo", "--username", "sam", "--team", "speech",
                                            capture=True))


@pytest.fixture(scope="package")
def survival_api(survival_stack: SurvivalStack, survival_seeded: dict[str, Any]) -> Api:
    return Api(survival_stack.web_url, survival_seeded["token"])
