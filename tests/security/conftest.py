"""Two teams, a user with each role in the first and an admin of the second, and API clients
that authenticate with real tokens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.runs.models import Job, JobState
from controlplane.security import tokens
from controlplane.teams.models import Role, Team
from tests.people import make_user
from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST


@dataclass
class World:
    team: Team
    other_team: Team
    users: dict[str, Any]  # viewer, member, admin (of team), outsider (admin of other_team)


@pytest.fixture
def world(db: None) -> World:
    team = Team.objects.create(name="Vision", slug="vision")
    other = Team.objects.create(name="Speech", slug="speech")
    users = {
        "viewer": make_user("vic", team, Role.VIEWER),
        "member": make_user("ann", team, Role.MEMBER),
        "admin": make_user("ada", team, Role.ADMIN),
        "outsider": make_user("oscar", other, Role.ADMIN),
    }
    return World(team=team, other_team=other, users=users)


@pytest.fixture
def make_job(db: None) -> Callable[..., Job]:
    def make(team: Team, user: Any, name: str = "exp", state: str = JobState.RUNNING,
             **fields: Any) -> Job:
        return Job.objects.create(
            team=team, created_by=user, name=name, request={**CPU_REQUEST, "name": name},
            custom_job=CPU_CUSTOM_JOB, project="p", region="us-central1", state=state,
            **fields)
    return make


@pytest.fixture
def token_client() -> Callable[[Any], APIClient]:
    """An API client for a user that sends a real token, as a script would."""
    def make(user: Any) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens.create(user, 'test').key}")
        return client
    return make
