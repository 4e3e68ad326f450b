"""Users, teams and jobs for the page tests, made with the ORM."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from jobs.backends import base
from jobs.models import Job, JobState, Membership, Role, Team

# A CustomJob as the composer writes it: one chief on a CPU machine.
CPU_CUSTOM_JOB = {
    "displayName": "exp",
    "jobSpec": {
        "workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
            "containerSpec": {"imageUri": "img", "command": [], "args": []},
        }],
        "scheduling": {"strategy": "STANDARD", "restartJobOnWorkerRestart": False},
    },
}
CPU_REQUEST = {"name": "exp", "strategy": "ddp", "spot": False,
               "args": ["--preset", "tiny"], "chief": {"machine_type": "n1-standard-4"},
               "workers": None, "region": "us-central1"}


@pytest.fixture
def backend(settings: Any) -> Iterator[base.Backend]:
    # create_job asks the backend for its project name; no call reaches it in these tests.
    settings.CP_BACKEND = "tests.fakes.FakeBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


@pytest.fixture
def team(db: None) -> Team:
    return Team.objects.create(name="Vision", slug="vision")


@pytest.fixture
def other_team(db: None) -> Team:
    return Team.objects.create(name="Speech", slug="speech")


def _user(name: str, team: Team, role: str) -> Any:
    # No password: the tests log in with force_login, and hashing one is slow.
    user = get_user_model().objects.create_user(username=name)
    Membership.objects.create(user=user, team=team, role=role)
    return user


@pytest.fixture
def member(team: Team) -> Any:
    return _user("ann", team, Role.MEMBER)


@pytest.fixture
def team_admin(team: Team) -> Any:
    return _user("ada", team, Role.ADMIN)


@pytest.fixture
def team_admin_client(team_admin: Any) -> Client:
    client = Client()
    client.force_login(team_admin)
    return client


@pytest.fixture
def viewer(team: Team) -> Any:
    return _user("vic", team, Role.VIEWER)


@pytest.fixture
def outsider(other_team: Team) -> Any:
    return _user("oscar", other_team, Role.ADMIN)


@pytest.fixture
def member_client(client: Client, member: Any) -> Client:
    client.force_login(member)
    return client


@pytest.fixture
def viewer_client(client: Client, viewer: Any) -> Client:
    client.force_login(viewer)
    return client


@pytest.fixture
def make_job(db: None) -> Callable[..., Job]:
    def make(team: Team, user: Any, name: str = "exp", state: str = JobState.RUNNING,
             **fields: Any) -> Job:
        return Job.objects.create(
            team=team, created_by=user, name=name, request={**CPU_REQUEST, "name": name},
            custom_job=CPU_CUSTOM_JOB, project="p", region="us-central1", state=state,
            **fields)
    return make
