"""The tensorrt runtime in the control plane: its packaging job builds the engine on the GPU
it will serve on (a catalogue-valid L4 machine, the TensorRT tools image), a deployment on
another accelerator is refused on that field, and predictions go through Triton's KServe v2
path exactly as triton's do."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job
from controlplane.serving import (
    lifecycle,
    options,
    packaging,
    predictions,
    registry,
    tensorrt_engine,
)
from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry
from vertexplan.catalog import validate_custom_job

COPY = "us-docker.pkg.dev/acme/serving/tritonserver:24.10-py3"
L4 = {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}
S = ModelEntry.State


@pytest.fixture
def tensorrt_entry(fake: FakeServing, backend: Any, queued: list, trained_job: Job,
                   member: Any, django_capture_on_commit_callbacks: Any) -> ModelEntry:
    get_image_registry().push(COPY)
    with django_capture_on_commit_callbacks(execute=True):
        entry = registry.register(job=trained_job, user=member, step=60, runtime="tensorrt",
                                  image_uri=COPY)
    assert queued == [("package_model", (str(entry.pk),))]
    return entry


def _ready(entry: ModelEntry, backend: Any) -> ModelEntry:
    packaging.submit(entry.pk)
    backend.set_state(ModelEntry.objects.get(pk=entry.pk).packaging_job, "JOB_STATE_SUCCEEDED")
    lifecycle.reconcile_all()
    registry.upload(entry.pk)
    entry.refresh_from_db()
    assert entry.state == S.READY
    return entry


def test_the_packaging_job_builds_the_engine_on_an_l4_in_the_tensorrt_image(
        tensorrt_entry: ModelEntry, backend: Any, trained_job: Job) -> None:
    assert tensorrt_entry.state == S.PACKAGING
    assert tensorrt_entry.engine_accelerator == "NVIDIA_L4"
    packaging.submit(tensorrt_entry.pk)
    [spec] = backend.created
    [pool] = spec["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "g2-standard-8",
                                   "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    assert pool["containerSpec"]["imageUri"] == options.tensorrt_tools_image()
    assert pool["containerSpec"]["imageUri"].endswith("/tensorrt:24.10-py3")
    assert pool["containerSpec"]["command"] == ["python", "-m",
                                                "trainers.serving.triton_package"]
    weights = f"{trained_job.output_uri}/checkpoints/step-00000060"
    assert pool["containerSpec"]["args"] == [weights, f"{weights}/tensorrt", "--check",
                                             "--engine", "tensorrt"]
    assert validate_custom_job(spec, "us-central1") == []  # the catalogue's own rules


def test_the_tools_image_is_a_setting(tensorrt_entry: ModelEntry, settings: Any) -> None:
    settings.CP_TENSORRT_TOOLS_IMAGE = "europe-docker.pkg.dev/acme/tools/tensorrt:25.01-py3"
    spec = packaging.custom_job(tensorrt_entry)
    image = spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"]
    assert image == "europe-docker.pkg.dev/acme/tools/tensorrt:25.01-py3"


def test_a_machine_the_catalogue_refuses_fails_the_entry_before_anything_is_sent(
        tensorrt_entry: ModelEntry, backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensorrt_engine, "MACHINE_TYPE", "n1-standard-8")  # takes no L4
    packaging.submit(tensorrt_entry.pk)
    entry = ModelEntry.objects.get(pk=tensorrt_entry.pk)
    assert entry.state == S.FAILED
    assert entry.error_message.startswith(
        "packaging job refused: jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType")
    assert not backend.created


def test_the_runtime_needs_tritons_image(fake: FakeServing, trained_job: Job,
                                         member: Any) -> None:
    with pytest.raises(registry.RegistryError, match="the tensorrt runtime serves Triton") as no:
        registry.register(job=trained_job, user=member, step=60, runtime="tensorrt")
    assert no.value.field == "image_uri"


def test_the_model_is_served_by_triton_like_a_triton_model(
        tensorrt_entry: ModelEntry, backend: Any) -> None:
    entry = _ready(tensorrt_entry, backend)
    assert entry.artifact_uri.endswith("/checkpoints/step-00000060/tensorrt")
    container = registry.container_for(entry)
    assert (container.command, container.args) == (["tritonserver"],
                                                   ["--vertex-ai-default-model=gpt"])
    assert container.predict_route == "/v2/models/gpt/infer"
    assert container.health_route == "/v2/health/ready"


@pytest.mark.parametrize(("resources", "asked"), [
    ({"machine_type": "n1-standard-4"}, "no accelerator"),
    ({"machine_type": "a2-highgpu-1g", "accelerator_type": "NVIDIA_TESLA_A100",
      "accelerator_count": 1}, "NVIDIA_TESLA_A100"),
    ({"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
      "accelerator_count": 1}, "NVIDIA_TESLA_T4"),
])
def test_a_deployment_on_another_accelerator_is_refused_on_that_field(
        tensorrt_entry: ModelEntry, backend: Any, member: Any, trained_job: Job,
        resources: dict, asked: str) -> None:
    entry = _ready(tensorrt_entry, backend)
    endpoint = ready_endpoint(trained_job.team, member)
    with pytest.raises(lifecycle.ServingError, match=f"built on NVIDIA_L4.*not on {asked}") as no:
        lifecycle.deploy(endpoint=endpoint, entry=entry, user=member, **resources)
    assert no.value.field == "accelerator_type"
    assert not Deployment.objects.exists()
    client = APIClient()
    client.force_authenticate(member)
    response = client.post(f"/api/v1/serving/endpoints/{endpoint.pk}/deployments/",
                           {"model": entry.pk, **resources}, format="json")
    assert response.status_code == 400
    assert "built on NVIDIA_L4" in response.json()["accelerator_type"][0]


def _endpoint(entry: ModelEntry, member: Any, trained_job: Job) -> Endpoint:
    endpoint = ready_endpoint(trained_job.team, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member, **L4)
    lifecycle.send_deploy(deployment.pk)
    return endpoint


def test_predictions_go_through_tritons_kserve_path(
        tensorrt_entry: ModelEntry, backend: Any, fake: FakeServing, member: Any,
        trained_job: Job) -> None:
    endpoint = _endpoint(_ready(tensorrt_entry, backend), member, trained_job)
    assert endpoint.deployments.get().accelerator_type == "NVIDIA_L4"
    result = predictions.predict(endpoint, [{"prompt": "ab", "max_tokens": 3}])
    assert result.predictions == [{"text": "cde", "tokens": 3}]  # the fake answers byte + 1
    assert [c[0] for c in fake.calls if "predict" in c[0]] == ["raw_predict"] * 3
    assert fake.raw_bodies[0]["inputs"][0] == {"name": "tokens", "datatype": "INT64",
                                               "shape": [1, 2], "data": [97, 98]}


def test_tensorrt_and_triton_share_an_endpoint_and_eager_does_not(
        tensorrt_entry: ModelEntry, backend: Any, fake: FakeServing, member: Any,
        trained_job: Job) -> None:
    endpoint = _endpoint(_ready(tensorrt_entry, backend), member, trained_job)
    triton = ready_entry(trained_job, member, step=30)
    ModelEntry.objects.filter(pk=triton.pk).update(runtime=ModelEntry.Runtime.TRITON)
    triton.refresh_from_db()
    split = lifecycle.deploy(endpoint=endpoint, entry=triton, user=member, traffic_percent=10,
                             machine_type="n1-standard-4")
    lifecycle.send_deploy(split.pk)
    assert predictions.serves_triton(endpoint)  # one KServe body for both
    assert predictions.predict(endpoint, ["a"], {"max_tokens": 1}).predictions == [
        {"text": "b", "tokens": 1}]
    ModelEntry.objects.filter(pk=triton.pk).update(runtime=ModelEntry.Runtime.EAGER)
    with pytest.raises(predictions.MixedRuntimes, match="between tensorrt and eager"):
        predictions.predict(endpoint, ["a"])
