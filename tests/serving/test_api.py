"""The serving REST API and pages: what each role may do, and the shapes scripts rely on."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job
from controlplane.serving import lifecycle, packaging, registry
from controlplane.serving.models import Deployment, Endpoint, LatencySample, ModelEntry, Slo
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def deployed(fake: FakeServing, queued: list, trained_job: Job, member: Any) -> Endpoint:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    return endpoint


def test_a_member_registers_creates_deploys_and_sets_an_slo(
        fake: FakeServing, queued: list, trained_job: Job, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    client = api(member)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/serving/models/", {"job": trained_job.pk, "step": 60},
                               format="json")
    assert response.status_code == 201, response.content
    entry_id = response.json()["id"]
    assert response.json()["artifact_uri"].endswith("/checkpoints/step-00000060")
    assert queued == [("upload_model", (str(entry_id),))]

    response = client.post("/api/v1/serving/models/", {"job": trained_job.pk, "step": 7},
                           format="json")
    assert response.status_code == 400 and "no checkpoint at step 7" in response.text

    response = client.post("/api/v1/serving/endpoints/", {
        "name": "prod", "probe_interval_s": 2,
        "probe_payload": {"instances": [{"prompt": "import ", "max_tokens": 4}]}},
        format="json")
    assert response.status_code == 201, response.content
    endpoint_id = response.json()["id"]
    assert response.json()["state"] == "CREATING"

    # Not READY yet: nothing can be deployed.
    response = client.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/",
                           {"model": entry_id}, format="json")
    assert response.status_code == 400
    lifecycle.send_create(endpoint_id)
    from controlplane.serving import registry
    registry.upload(entry_id)
    response = client.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/", {
        "model": entry_id, "machine_type": "n1-standard-4", "min_replicas": 1,
        "max_replicas": 3, "autoscaling_metric": "cpu", "autoscaling_target": 65},
        format="json")
    assert response.status_code == 201, response.content
    assert response.json()["state"] == "DEPLOYING"
    deployment_id = response.json()["id"]
    lifecycle.send_deploy(deployment_id)

    response = client.patch(f"/api/v1/serving/deployments/{deployment_id}/", {
        "min_replicas": 2, "max_replicas": 5, "autoscaling_metric": "cpu",
        "autoscaling_target": 50}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["min_replicas"] == 2

    response = client.put(f"/api/v1/serving/endpoints/{endpoint_id}/slo/", {
        "p95_ms": 250, "error_rate": 0.02, "window_s": 120, "min_samples": 5}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "OK"
    detail = client.get(f"/api/v1/serving/endpoints/{endpoint_id}/").json()
    assert detail["slo"]["p95_ms"] == 250
    assert [d["state"] for d in detail["deployments"]] == ["DEPLOYED"]

    response = client.post(f"/api/v1/serving/endpoints/{endpoint_id}/predict/",
                           {"instances": ["def "]}, format="json")
    assert response.status_code == 200
    assert response.json()["predictions"] == [{"text": "x", "tokens": 1}]


def test_latency_series_and_samples(deployed: Endpoint, member: Any) -> None:
    now = timezone.now()
    LatencySample.objects.bulk_create(
        LatencySample(endpoint=deployed, at=now - timedelta(seconds=30 * i),
                      latency_ms=10.0 + i, ok=i != 3, error="" if i != 3 else "boom")
        for i in range(20))
    Slo.objects.create(endpoint=deployed, p95_ms=100)
    body = api(member).get(f"/api/v1/serving/endpoints/{deployed.pk}/latency/",
                           {"minutes": 15}).json()
    assert body["slo"]["p95_ms"] == 100
    probe = body["probe"]
    assert sum(probe["samples"]) == 20 and len(probe["t"]) == len(probe["p95"])
    assert any(rate and rate > 0 for rate in probe["error_rate"])
    samples = api(member).get(f"/api/v1/serving/endpoints/{deployed.pk}/samples/").json()
    assert samples["count"] == 20 and samples["results"][0]["latency_ms"] == 10.0
    job = api(member).get(f"/api/v1/serving/jobs/{deployed.deployments.get().model_entry.job_id}/",
                          {"minutes": 15}).json()
    assert [e["endpoint"] for e in job["endpoints"]] == [deployed.pk]
    assert job["checkpoint_steps"] == [30, 60]


def test_viewers_read_and_outsiders_see_nothing(deployed: Endpoint, viewer: Any,
                                                outsider: Any) -> None:
    assert api(viewer).get(f"/api/v1/serving/endpoints/{deployed.pk}/").status_code == 200
    assert api(viewer).delete(f"/api/v1/serving/endpoints/{deployed.pk}/").status_code == 403
    deployment = deployed.deployments.get()
    assert api(viewer).post(
        f"/api/v1/serving/deployments/{deployment.pk}/undeploy/").status_code == 403
    assert api(outsider).get(f"/api/v1/serving/endpoints/{deployed.pk}/").status_code == 404
    assert api(outsider).get("/api/v1/serving/endpoints/").json()["count"] == 0
    assert api(outsider).get("/api/v1/serving/models/").json()["count"] == 0


def test_unknown_fields_are_refused(deployed: Endpoint, member: Any) -> None:
    response = api(member).post(f"/api/v1/serving/endpoints/{deployed.pk}/deployments/",
                                {"model": 1, "machine": "n1"}, format="json")
    assert response.status_code == 400 and "machine" in response.json()


def test_the_pages_render(deployed: Endpoint, member: Any, client: Client) -> None:
    client.force_login(member)
    Slo.objects.create(endpoint=deployed, p95_ms=100)
    index = client.get("/serving/")
    assert index.status_code == 200 and "gpt-prod" in index.text
    page = client.get(f"/serving/endpoints/{deployed.pk}/")
    assert page.status_code == 200
    assert 'class="chart latency-chart"' in page.text and "plotly" in page.text
    assert "n1-standard-4" in page.text and "SLO OK" in page.text
    data = client.get(f"/serving/endpoints/{deployed.pk}/latency.json").json()
    assert set(data) >= {"probe", "monitoring", "slo", "alerts"}
    job_id = ModelEntry.objects.get().job_id
    panel = client.get(f"/serving/jobs/{job_id}/panel/")
    assert panel.status_code == 200 and "gpt-prod" in panel.text and "latency-chart" in panel.text


def test_the_deploy_form_reports_vertex_s_rules(deployed: Endpoint, member: Any,
                                                client: Client) -> None:
    client.force_login(member)
    entry = ModelEntry.objects.get()
    response = client.post(f"/serving/endpoints/{deployed.pk}/deploy/", {
        "model": entry.pk, "machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_L4",
        "accelerator_count": 1, "min_replicas": 1, "max_replicas": 1,
        "autoscaling_metric": "", "autoscaling_target": 0, "traffic_percent": 100},
        follow=True)
    assert "takes no NVIDIA_L4" in response.text
    assert Deployment.objects.count() == 1


def test_a_model_registered_with_the_compiled_runtime_starts_its_server_compiled(
        fake: FakeServing, queued: list, trained_job: Job, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    client = api(member)
    refused = client.post("/api/v1/serving/models/",
                          {"job": trained_job.pk, "step": 60, "runtime": "onnxruntime"},
                          format="json")
    assert refused.status_code == 400 and "runtime" in refused.json()
    assert ModelEntry.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/serving/models/",
                               {"job": trained_job.pk, "step": 60, "runtime": "compiled"},
                               format="json")
    assert response.status_code == 201, response.content
    assert response.json()["runtime"] == "compiled"
    entry = ModelEntry.objects.get(pk=response.json()["id"])
    registry.upload(entry.pk)
    # The Model Registry entry's container is what every replica of a deployment starts.
    [uploaded] = fake.models.values()
    assert uploaded["container"].command == ["python", "-m", "trainers.serve"]
    assert uploaded["container"].args == ["--runtime", "compiled"]
    # Each replica compiles before it answers: Vertex waits longer than its default for it.
    assert uploaded["container"].deployment_timeout_s == 1800


def test_a_model_registered_with_the_triton_runtime_is_served_by_tritons_image(
        fake: FakeServing, backend: Any, queued: list, trained_job: Job, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    client = api(member)
    # Triton's image must be the team's Artifact Registry copy: none named, none guessed.
    refused = client.post("/api/v1/serving/models/",
                          {"job": trained_job.pk, "step": 60, "runtime": "triton"}, format="json")
    assert refused.status_code == 400
    [message] = refused.json()["image_uri"]
    assert "nvcr.io/nvidia/tritonserver:24.10-py3" in message
    copy = "us-docker.pkg.dev/acme/serving/tritonserver"
    missing = client.post("/api/v1/serving/models/", {"job": trained_job.pk, "step": 60,
                                                      "runtime": "triton",
                                                      "image_uri": f"{copy}:24.10-py3"},
                          format="json")
    assert missing.status_code == 400 and "image_uri" in missing.json()
    get_image_registry().push(f"{copy}:24.10-py3")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/serving/models/",
                               {"job": trained_job.pk, "step": 60, "runtime": "triton",
                                "image_uri": f"{copy}:24.10-py3"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["runtime"] == "triton"
    assert response.json()["state"] == "PACKAGING"
    entry = ModelEntry.objects.get(pk=response.json()["id"])
    # Its repository is built by the packaging job first (tests/serving/test_packaging.py).
    packaging.submit(entry.pk)
    backend.set_state(ModelEntry.objects.get(pk=entry.pk).packaging_job, "JOB_STATE_SUCCEEDED")
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.reconcile_all()
    assert ModelEntry.objects.get(pk=entry.pk).state == ModelEntry.State.UPLOADING
    registry.upload(entry.pk)
    [uploaded] = fake.models.values()
    # The artifact is the model repository's root, which Triton reads from AIP_STORAGE_URI.
    assert uploaded["artifact_uri"] == f"{trained_job.output_uri}/checkpoints/step-00000060/triton"
    container = uploaded["container"]
    assert container.image_uri == f"{copy}:24.10-py3"
    assert container.command == ["tritonserver"]
    assert container.args == ["--vertex-ai-default-model=gpt_generate"]
    assert container.deployment_timeout_s == 0  # Vertex's default
    # The generation model (trainers/serving/triton_generate_model.py) on the predict route.
    assert (container.predict_route, container.health_route) == (
        "/v2/models/gpt_generate/infer", "/v2/health/ready")
    # The same checkpoint may also be registered for the product's own server.
    eager = client.post("/api/v1/serving/models/", {"job": trained_job.pk, "step": 60},
                        format="json")
    assert eager.status_code == 201, eager.content
    assert ModelEntry.objects.get(pk=eager.json()["id"]).artifact_uri.endswith("step-00000060")
