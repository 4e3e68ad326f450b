"""Jobs placed on a cluster through the jobs API: only a running cluster of the job's own team,
and only pools that fit it; another team's cluster reads as no cluster."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster
from controlplane.runs.models import Job

pytestmark = pytest.mark.django_db


def running_cluster(team, user) -> Cluster:
    cluster = lifecycle.create_cluster(team=team, user=user, request={
        "name": "pool", "pools": [{"id": "a", "machine_type": "n1-standard-4",
                                   "replica_count": 2}]})
    assert cluster.transition(Cluster.State.RUNNING)
    return cluster


def custom_job(resource_id: str, replicas: int = 1) -> dict[str, Any]:
    return {"displayName": "on-cluster", "jobSpec": {
        "persistentResourceId": resource_id,
        "workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                             "replicaCount": "1",
                             "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t/trainer:1",
                                               "command": ["python", "train.py"]}},
                            *([{"machineSpec": {"machineType": "n1-standard-4"},
                                "replicaCount": str(replicas),
                                "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t/t:1",
                                                  "command": ["python", "train.py"]}}]
                              if replicas > 1 else [])]}}


def submit(user, body):
    client = APIClient()
    client.force_authenticate(user)
    return client.post("/api/v1/jobs/", body, format="json")


def test_a_job_fits_its_teams_running_cluster(member, backend, queued):
    cluster = running_cluster(member.memberships.get().team, member)
    response = submit(member, custom_job(cluster.vertex_resource_id))
    assert response.status_code == 201, response.content
    assert Job.objects.get().custom_job["jobSpec"]["persistentResourceId"] == \
        cluster.vertex_resource_id


def test_too_big_for_the_cluster_or_not_a_cluster_is_a_field_error(member, outsider, backend,
                                                                    queued):
    cluster = running_cluster(member.memberships.get().team, member)
    response = submit(member, custom_job(cluster.vertex_resource_id, replicas=3))
    assert response.status_code == 400
    assert "asks for 3 replicas" in str(response.json()["jobSpec.persistentResourceId"])
    response = submit(member, custom_job("cp-cl-999999"))
    assert response.status_code == 400 and "not a running cluster" in response.text
    # Another team's cluster is as good as none.
    response = submit(outsider, custom_job(cluster.vertex_resource_id))
    assert response.status_code == 400 and "not a running cluster" in response.text
    assert not Job.objects.exists()


def test_the_forms_request_names_the_cluster_in_job_spec_extra(member, backend, queued):
    cluster = running_cluster(member.memberships.get().team, member)
    body = {"name": "exp", "chief": {"machine_type": "n1-standard-8"},
            "args": ["--preset", "tiny"],
            "job_spec_extra": {"persistentResourceId": cluster.vertex_resource_id}}
    response = submit(member, body)
    assert response.status_code == 400
    assert "matches no pool" in str(response.json()["job_spec_extra"])
    body["chief"]["machine_type"] = "n1-standard-4"
    response = submit(member, body)
    assert response.status_code == 201, response.content
