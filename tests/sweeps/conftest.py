"""A scripted tuning backend, users with roles, and a sweep recorded through the lifecycle."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controlplane.teams.models import Role, Team
from tests.fakes import FakeTuningBackend
from tests.people import make_user

TRIAL_JOB = {"args": ["--preset", "tiny", "--steps", "4"],
             "chief": {"machine_type": "n1-standard-4"}}


def sweep_body(**changes: Any) -> dict[str, Any]:
    body = {
        "display_name": "lr-sweep",
        "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
        "parameters": [{"parameter_id": "lr", "type": "DOUBLE", "min_value": 1e-4,
                        "max_value": 1e-2, "scale_type": "UNIT_LOG_SCALE"}],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 3, "parallel_trial_count": 1, "max_failed_trial_count": 1,
        "trial_job": TRIAL_JOB, "trial_hours": "0.5",
    }
    body.update(changes)
    return body


@pytest.fixture
def tuning_backend(settings: Any) -> Iterator[FakeTuningBackend]:
    from controlplane.backends import base

    settings.CP_BACKEND = "tests.fakes.FakeTuningBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


@pytest.fixture
def member(team: Team) -> Any:
    return make_user("mia", team, Role.MEMBER)


@pytest.fixture
def viewer(team: Team) -> Any:
    return make_user("vic", team, Role.VIEWER)


@pytest.fixture
def outsider(other_team: Team) -> Any:
    return make_user("oz", other_team, Role.MEMBER)
