"""Team policy: where a team's jobs write and which shared resources they use, set by the
team's admins and held in validation for every way a job comes in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.teams.models import TeamPolicy
from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST
from tests.security.conftest import World

SA = "trainer-vision@my-project.iam.gserviceaccount.com"
NET = "projects/123/global/networks/vision-vpc"
RES = "projects/p/zones/us-central1-a/reservations/vision-a100"


@pytest.fixture
def member(world: World, token_client: Callable[[Any], APIClient]) -> APIClient:
    return token_client(world.users["member"])


def _job(**fields: Any) -> dict[str, Any]:
    return {**CPU_REQUEST, "team": "vision", **fields}


@pytest.mark.parametrize("fields, key", [
    ({"base_output_directory": "gs://cp-local-bucket/jobs/speech/job-3"}, "base_output_directory"),
    ({"base_output_directory": "gs://cp-local-bucket/jobs/vision/../speech"},
     "base_output_directory"),
    ({"base_output_directory": "gs://cp-local-bucket/jobs/vision-evil/x"},
     "base_output_directory"),
    ({"service_account": "attacker@evil.iam.gserviceaccount.com"}, "service_account"),
    ({"network": "projects/999/global/networks/speech-vpc"}, "network"),
    ({"enable_web_access": True}, "enable_web_access"),
])
def test_a_team_without_policy_uses_nothing_shared(world: World, member: APIClient,
                                                   fields: dict[str, Any], key: str) -> None:
    answer = member.post("/api/v1/jobs/", _job(**fields), format="json")
    assert answer.status_code == 400, answer.content
    assert key in answer.json(), answer.json()
    assert not Job.objects.exists()


def test_the_custom_job_shape_is_held_to_the_same_policy(world: World,
                                                          member: APIClient) -> None:
    spec = {**CPU_CUSTOM_JOB["jobSpec"], "serviceAccount": SA,
            "baseOutputDirectory": {"outputUriPrefix": "gs://cp-local-bucket/jobs/speech"}}
    answer = member.post("/api/v1/jobs/?team=vision", {**CPU_CUSTOM_JOB, "jobSpec": spec},
                         format="json")
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert any("baseOutputDirectory" in k for k in body), body
    assert any("serviceAccount" in k for k in body), body


def test_admins_set_the_policy_and_members_use_it(
        world: World, member: APIClient, token_client: Callable[[Any], APIClient]) -> None:
    url = "/api/v1/teams/vision/policy/"
    assert member.get(url).json()["output_prefix"] == "gs://cp-local-bucket/jobs/vision/"
    assert member.patch(url, {"allow_web_access": True}, format="json").status_code == 403
    admin = token_client(world.users["admin"])
    answer = admin.patch(url, {"service_accounts": [SA], "networks": [NET],
                               "reservations": [RES], "allow_web_access": True},
                         format="json")
    assert answer.status_code == 200, answer.content
    made = member.post("/api/v1/jobs/", _job(
        service_account=SA, network=NET, enable_web_access=True,
        base_output_directory="gs://cp-local-bucket/jobs/vision/shared/run-1",
        chief={"machine_type": "n1-standard-4", "reservation": {
            "type": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
            "values": [RES]}}), format="json")
    assert made.status_code == 201, made.content
    refused = member.post("/api/v1/jobs/", _job(chief={
        "machine_type": "n1-standard-4", "reservation": {"type": "ANY_RESERVATION"}}),
        format="json")
    assert refused.status_code == 400 and "chief" in refused.json(), refused.content
    # The other team can neither take the account nor reach into vision's folder.
    other = token_client(world.users["outsider"])
    taken = other.patch("/api/v1/teams/speech/policy/", {"service_accounts": [SA]},
                        format="json")
    assert taken.status_code == 400 and "service_accounts" in taken.json()
    for prefix in ("gs://cp-local-bucket/jobs/vision/x", "gs://cp-local-bucket/jobs",
                   "gs://cp-local-bucket/jobs/speech/../vision", "s3://x/y", "gs://b"):
        answer = other.patch("/api/v1/teams/speech/policy/", {"output_prefix": prefix},
                             format="json")
        assert answer.status_code == 400 and "output_prefix" in answer.json(), prefix
    assert other.patch("/api/v1/teams/vision/policy/", {"allow_web_access": False},
                       format="json").status_code == 404
    assert TeamPolicy.objects.get(team=world.team).allow_web_access is True
    moved = other.patch("/api/v1/teams/speech/policy/",
                        {"output_prefix": "gs://speech-bucket/training"}, format="json")
    assert moved.status_code == 200
    assert moved.json()["output_prefix"] == "gs://speech-bucket/training/"


def test_a_job_writes_under_its_teams_prefix(world: World, member: APIClient) -> None:
    TeamPolicy.objects.create(team=world.team, output_prefix="gs://vision-bucket/runs")
    made = member.post("/api/v1/jobs/", _job(), format="json")
    assert made.status_code == 201, made.content
    job = Job.objects.get(pk=made.json()["id"])
    assert job.output_uri == f"gs://vision-bucket/runs/job-{job.pk}"
    refused = member.post("/api/v1/jobs/", _job(
        base_output_directory="gs://cp-local-bucket/jobs/vision/x"), format="json")
    assert refused.status_code == 400
    assert "gs://vision-bucket/runs/" in refused.json()["base_output_directory"][0]
