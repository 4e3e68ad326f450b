"""Two teams, a user with each role in the first and an admin of the second, and API clients
that authenticate with real tokens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from jobs.backends import base
from jobs.models import Job, JobState, Membership, Role, Team
from security import tokens
from tests.web.conftest import CPU_CUSTOM_JOB, CPU_REQUEST


@dataclass
class World:
    team: Team
    other_team: Team
    users: dict[str, Any]  # viewer, member, admin (of team), outsider (admin of other_team)


@pytest.fixture
def backend(settings: Any) -> Iterator[base.Backend]:
    # create_job asks the backend for its project name; no call reaches it in these tests.
    settings.CP_BACKEND = "tests.fakes.FakeBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


def make_user(name: str, team: Team, role: str) -> Any:
    user = get_user_model().objects.create_user(username=name)
    Membership.objects.create(user=user, team=team, role=role)
    return user


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
