"""A Python package in a prebuilt image (pythonPackageSpec) from the compose form: its own
inputs, the package URIs one a line, errors under the input they concern, and a package job
cloned back into those inputs rather than into the advanced JSON."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.forms import initial_from_request
from controlplane.runs.models import Job
from tests.compose.test_compose_page import errors_shown_on, form_data

IMAGE = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest"
PACKAGE_FIELDS = {
    "pkg_executor_image_uri": IMAGE,
    "pkg_package_uris": "gs://my-bucket/trainer-0.1.tar.gz\r\ngs://my-bucket/deps-2.0.whl\r\n",
    "pkg_python_module": "trainer.task",
    "args": "--lr 0.1",
}


def test_a_package_job_from_the_form_runs_its_module_in_the_prebuilt_image(
        member_client: Client, backend: Backend, django_capture_on_commit_callbacks: Any
        ) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), form_data(**PACKAGE_FIELDS))
    assert response.status_code == 302, response.context["form"].errors.as_data()
    pools = Job.objects.get().custom_job["jobSpec"]["workerPoolSpecs"]
    spec = pools[0]["pythonPackageSpec"]
    assert spec == {"executorImageUri": IMAGE,
                    "packageUris": ["gs://my-bucket/trainer-0.1.tar.gz",
                                    "gs://my-bucket/deps-2.0.whl"],
                    "pythonModule": "trainer.task", "args": ["--lr", "0.1"]}
    assert "containerSpec" not in pools[0]


def test_a_package_without_its_image_is_refused_on_the_image_input(
        member_client: Client, backend: Backend) -> None:
    response = member_client.post(reverse("job-compose"),
                                  form_data(**{**PACKAGE_FIELDS, "pkg_executor_image_uri": ""}))
    assert response.status_code == 400
    shown = errors_shown_on(response.content.decode(), "pkg_executor_image_uri")
    assert "executorImageUri is required" in shown
    assert Job.objects.count() == 0


def test_a_package_uri_outside_cloud_storage_is_refused_on_the_uris_input(
        member_client: Client, backend: Backend) -> None:
    uris = "gs://my-bucket/trainer-0.1.tar.gz\nhttps://example.com/evil.whl"
    response = member_client.post(reverse("job-compose"),
                                  form_data(**{**PACKAGE_FIELDS, "pkg_package_uris": uris}))
    assert response.status_code == 400
    shown = errors_shown_on(response.content.decode(), "pkg_package_uris")
    assert "packageUris[1] must be a gs:// URI" in shown
    assert Job.objects.count() == 0


def test_a_package_job_clones_into_the_package_inputs() -> None:
    request = {"name": "pkg", "chief": {"machine_type": "n1-standard-4"},
               "python_package": {"executor_image_uri": IMAGE,
                                  "package_uris": ["gs://b/a.tar.gz", "gs://b/c.whl"],
                                  "python_module": "trainer.task"}}
    initial = initial_from_request(request, "vision")
    assert initial["pkg_executor_image_uri"] == IMAGE
    assert initial["pkg_package_uris"] == "gs://b/a.tar.gz\ngs://b/c.whl"
    assert initial["pkg_python_module"] == "trainer.task"
    assert "python_package" not in initial.get("advanced", "")
