"""Users, teams and jobs for the page tests, made with the ORM."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user

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
def member(team: Team) -> Any:
    return make_user("ann", team, Role.MEMBER)


@pytest.fixture
def team_admin(team: Team) -> Any:
    return make_user("ada", team, Role.ADMIN)


@pytest.fixture
def team_admin_client(team_admin: Any) -> Client:
    client = Client()
    client.force_login(team_admin)
    return client


@pytest.fixture
def viewer(team: Team) -> Any:
    return make_user("vic", team, Role.VIEWER)


@pytest.fixture
def outsider(other_team: Team) -> Any:
    return make_user("oscar", other_team, Role.ADMIN)


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
