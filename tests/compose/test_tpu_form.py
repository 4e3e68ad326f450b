"""The compose form on a TPU slice: the framework is the strategy (JAX or PyTorch/XLA), a GPU
strategy on a TPU machine is refused on the strategy field naming the two that run there, and
a JAX job composed from the form runs the built-in JAX trainer."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.forms import JobForm
from controlplane.runs.models import Job
from tests.compose.test_compose_page import errors_shown_on, form_data
from vertexplan.composer import parallelism

TPU_FIELDS = {"chief_machine_type": "ct5lp-hightpu-4t", "chief_tpu_topology": "2x2",
              "workers_replica_count": "0"}


def test_tpu_slices_offer_exactly_the_two_frameworks_by_name(member: Any) -> None:
    groups = dict(JobForm(user=member).fields["strategy"].choices)
    tpu = dict(groups["TPU slices: framework"])
    assert tpu == {"tpu_jax": "JAX (tpu_jax)", "tpu_xla": "PyTorch/XLA (tpu_xla)"}
    assert [name for name, _ in groups["GPU or CPU machines"]] == list(
        parallelism.GPU_STRATEGIES)


@pytest.mark.parametrize("strategy", parallelism.GPU_STRATEGIES)
def test_a_gpu_strategy_on_a_tpu_machine_is_refused_on_the_strategy_field(
        member_client: Client, backend: Backend, strategy: str) -> None:
    response = member_client.post(reverse("job-compose"),
                                  form_data(strategy=strategy, **TPU_FIELDS))
    assert response.status_code == 400
    shown = errors_shown_on(response.content.decode(), "strategy")
    assert "ct5lp-hightpu-4t is a TPU machine" in shown
    assert "tpu_jax (JAX)" in shown and "tpu_xla (PyTorch/XLA)" in shown
    assert Job.objects.count() == 0


def test_a_jax_job_from_the_form_runs_the_jax_trainer_in_the_jax_image(
        member_client: Client, backend: Backend, settings: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.CP_TPU_JAX_IMAGE = "us-docker.pkg.dev/ops/tpu/jax:5"
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"),
                                      form_data(strategy="tpu_jax", **TPU_FIELDS))
    assert response.status_code == 302, response.context["form"].errors.as_data()
    [pool] = Job.objects.get().custom_job["jobSpec"]["workerPoolSpecs"]
    container = pool["containerSpec"]
    assert container["imageUri"] == "us-docker.pkg.dev/ops/tpu/jax:5"
    assert container["command"] == ["python", "-m", "trainers.jax"]
    assert container["args"] == ["--mesh", "4,1,1", "--preset", "tiny", "--steps", "20"]
