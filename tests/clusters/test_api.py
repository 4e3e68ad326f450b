"""The clusters REST API and pages: field errors that change nothing, team isolation, roles,
the cost per hour while a cluster exists, and Ray job input that never reaches a shell."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster, RayJob

pytestmark = pytest.mark.django_db

RAY_CLUSTER = {
    "name": "ray-a",
    "pools": [{"id": "head", "machine_type": "n1-standard-4"},
              {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2,
               "min_replica_count": 1, "max_replica_count": 4}],
    "ray": {"version": "2.47.1"},
}
TASK = "controlplane.clusters.tasks."


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def create(user: Any, body: dict | None = None):
    return api(user).post("/api/v1/clusters/", body or RAY_CLUSTER, format="json")


def test_member_creates_a_priced_cluster_queued_by_name(member, queued):
    response = create(member)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["state"] == "CREATING" and body["team"] == "vision"
    assert body["min_hourly_micros"] < body["hourly_micros"] < body["max_hourly_micros"]
    assert "whether or not a job runs" in body["billing"]
    assert body["resource"]["resourceRuntimeSpec"]["raySpec"]["imageUri"].endswith(
        "ray-cpu.2-47.py311:latest")
    assert queued == [(TASK + "reconcile_cluster", (str(body["id"]),))]
    cluster = Cluster.objects.get()
    assert cluster.vertex_resource_id == f"cp-cl-{cluster.pk}"  # never the user's string


@pytest.mark.parametrize("change,field", [
    (lambda b: b["pools"][0].update(accelerator_type="NVIDIA_TESLA_A100",
                                    accelerator_count=1), "pools[0].accelerator_type"),
    (lambda b: b.update(ray={"version": "2.9.0"}), "ray.version"),
    (lambda b: b.update(name="../../etc"), "name"),
    (lambda b: b["pools"][1].update(machine_type="n1-nonsense-8"), "pools[1].machine_type"),
    (lambda b: b["pools"][1].update(replica_count=9), "pools[1].replica_count"),
    # cp-team picks the user on the machine its Ray nodes run as: the control plane's only.
    (lambda b: b.update(labels={"cp-team": "speech"}), 'labels["cp-team"]'),
])
def test_bad_input_is_a_field_error_and_changes_nothing(member, queued, change, field):
    body = copy.deepcopy(RAY_CLUSTER)
    change(body)
    response = create(member, body)
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert not Cluster.objects.exists() and queued == []


def test_unknown_keys_are_refused(member, queued):
    response = create(member, {**RAY_CLUSTER, "nodes": 3})
    assert response.status_code == 400 and "nodes" in response.json()


def test_the_resource_created_carries_its_teams_label(member, queued, monkeypatch):
    """The emulator runs a cluster's Ray nodes as the user of the team its cp-team label
    names (localvertex/replicas/team_users.py): the control plane writes it at create."""
    made: list[dict] = []

    class Backend:
        def resource_name(self, resource_id: str) -> str:
            return f"projects/p/locations/us-central1/persistentResources/{resource_id}"

        def create(self, resource_id: str, resource: dict) -> Any:
            made.append(resource)
            return type("Operation", (), {"name": "op/1", "done": False})()

        def get(self, name: str) -> Any:
            return type("Remote", (), {"state": "PROVISIONING"})()

    monkeypatch.setattr(lifecycle, "get_cluster_backend", Backend)
    body = create(member, {**RAY_CLUSTER, "labels": {"project": "vlm"}}).json()
    lifecycle.reconcile(body["id"])
    assert made and made[0]["labels"] == {"project": "vlm", "cp-team": "vision"}
    assert made[0]["resourcePools"] == body["resource"]["resourcePools"]


def test_one_live_cluster_per_name_in_a_team(member, outsider, queued):
    assert create(member).status_code == 201
    response = create(member)
    assert response.status_code == 400 and "name" in response.json()
    # Another team may use the same name: names are the team's own.
    assert create(outsider).status_code == 201


def test_other_teams_clusters_are_invisible_and_viewers_cannot_change(
        member, viewer, outsider, queued):
    cluster_id = create(member).json()["id"]
    assert api(outsider).get(f"/api/v1/clusters/{cluster_id}/").status_code == 404
    assert api(outsider).get("/api/v1/clusters/").json()["results"] == []
    assert api(outsider).delete(f"/api/v1/clusters/{cluster_id}/").status_code == 404
    response = api(outsider).post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster_id, "entrypoint": ["python", "-V"]}, format="json")
    assert response.status_code == 404  # as for its id in a URL: nothing leaks
    assert api(viewer).get(f"/api/v1/clusters/{cluster_id}/").status_code == 200
    assert api(viewer).delete(f"/api/v1/clusters/{cluster_id}/").status_code == 403
    assert Cluster.objects.get().state == "CREATING"


def running(member) -> Cluster:
    cluster = Cluster.objects.get(pk=create(member).json()["id"])
    cluster.vertex_name = "projects/p/locations/us-central1/persistentResources/cp-cl-1"
    cluster.save()
    assert cluster.transition(Cluster.State.RUNNING, dashboard_uri="127.0.0.1:8265")
    return cluster


def test_ray_job_argv_is_checked_and_queued(member, queued):
    cluster = running(member)
    client = api(member)
    for entrypoint in ("python train.py; rm -rf /", [], ["x" * 1001]):
        response = client.post("/api/v1/clusters/ray-jobs/", {
            "cluster": cluster.pk, "entrypoint": entrypoint}, format="json")
        assert response.status_code == 400 and "entrypoint" in response.json()
    response = client.post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster.pk, "entrypoint": ["python", "-c", "print(1)"],
        "env_vars": {"bad name": "x"}}, format="json")
    assert response.status_code == 400 and "env_vars" in response.json()
    response = client.post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster.pk, "entrypoint": ["python", "-c", "print('a; b')"]}, format="json")
    assert response.status_code == 201, response.content
    job = RayJob.objects.get()
    assert job.submission_id == f"cp-ray-{job.pk}"
    assert queued[-1] == (TASK + "advance_ray_job", (str(job.pk),))


def test_replica_changes_are_checked_like_a_new_cluster(member, queued):
    cluster = running(member)
    client = api(member)
    response = client.patch(f"/api/v1/clusters/{cluster.pk}/",
                            {"replicas": {"head": 2}}, format="json")
    assert response.status_code == 400 and "pools[0].replica_count" in response.json()
    response = client.patch(f"/api/v1/clusters/{cluster.pk}/",
                            {"replicas": {"nope": 2}}, format="json")
    assert response.status_code == 400 and "replicas" in response.json()
    before = Cluster.objects.get().hourly_micros
    response = client.patch(f"/api/v1/clusters/{cluster.pk}/",
                            {"replicas": {"workers": 4}}, format="json")
    assert response.status_code == 202, response.content
    cluster.refresh_from_db()
    assert cluster.state == "UPDATING" and cluster.hourly_micros > before
    assert cluster.resource["resourcePools"][1]["replicaCount"] == "4"


def test_deleting_stops_its_ray_jobs_and_a_job_for_a_deleted_cluster_is_refused(member, queued):
    cluster = running(member)
    lifecycle.submit_ray_job(cluster=cluster, user=member, entrypoint=["python", "-V"])
    assert api(member).delete(f"/api/v1/clusters/{cluster.pk}/").status_code == 202
    assert RayJob.objects.get().state == "STOPPED"
    cluster.refresh_from_db()
    assert cluster.transition(Cluster.State.DELETED)
    response = api(member).post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster.pk, "entrypoint": ["python", "-V"]}, format="json")
    assert response.status_code == 400
    assert "DELETED" in response.json()["cluster"][0]
    # The cost clock stopped at deletion.
    assert cluster.accrued_micros() == Cluster.objects.get().accrued_micros()


def test_pages_show_cost_per_hour_and_that_it_bills_while_it_exists(member, outsider, queued):
    cluster = running(member)
    browser = Client()
    browser.force_login(member)
    page = browser.get("/clusters/")
    assert page.status_code == 200 and "ray-a" in page.text
    assert "bills for every provisioned node" in page.text
    page = browser.get(f"/clusters/{cluster.pk}/")
    assert page.status_code == 200 and "per hour while it exists" in page.text
    browser.force_login(outsider)
    assert browser.get(f"/clusters/{cluster.pk}/").status_code == 404


RAY_OUTPUT = "\n".join([
    "2026-11-25 02:21:23,917 INFO worker.py:1691 -- Using address 127.0.0.1:60109",
    '(RayTrainWorker pid=7377) {"event":"step","step":1,"loss":5.5}',
    "(RayTrainWorker pid=7377) WARNING: NCCL is slow here",
    "Traceback (most recent call last):",
    '  File "train.py", line 9, in <module>',
    "RuntimeError: CUDA out of memory",
])


def test_ray_job_logs_are_searchable_by_text_and_severity(member, viewer, outsider, queued):
    cluster = running(member)
    job = RayJob.objects.create(team=cluster.team, cluster=cluster, created_by=member,
                                entrypoint=["python", "train.py"], logs=RAY_OUTPUT)
    url = f"/api/v1/clusters/ray-jobs/{job.pk}/logs/"
    whole = api(viewer).get(url).json()
    assert whole["logs"] == RAY_OUTPUT and whole["matched"] == 6
    errors = api(viewer).get(url, {"severity": "ERROR"}).json()
    assert [line["number"] for line in errors["lines"]] == [4, 5, 6]
    assert errors["logs"].endswith("RuntimeError: CUDA out of memory")
    warnings = api(viewer).get(url, {"severity": "warning", "q": "nccl"}).json()
    assert warnings["lines"] == [{"number": 3, "severity": 400,
                                  "text": "(RayTrainWorker pid=7377) WARNING: NCCL is slow here"}]
    # The text is a plain substring, never a pattern.
    assert api(viewer).get(url, {"q": ".*"}).json()["matched"] == 0
    bad = api(viewer).get(url, {"severity": "LOUD"})
    assert bad.status_code == 400 and "severity" in bad.json()
    assert api(outsider).get(url, {"q": "CUDA"}).status_code == 404
