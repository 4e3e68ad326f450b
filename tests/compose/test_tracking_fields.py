"""A job's Vertex TensorBoard and Experiment from the compose form and the API: on the job's
CustomJobSpec, refused on their field when malformed, and the TensorBoard linked from the job."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.runs import links
from controlplane.runs.models import Job
from tests.compose.test_compose_page import errors_shown_on, form_data
from tests.vertexplan.test_composer_tracking import BOARD, EXPERIMENT, RUN


def test_the_form_sets_them_on_the_job(member_client: Client, backend: Backend,
                                       django_capture_on_commit_callbacks: Any,
                                       settings: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), form_data(
            tensorboard=BOARD, experiment=EXPERIMENT, experiment_run=RUN))
    assert response.status_code == 302, response.content.decode()[:2000]
    job = Job.objects.get()
    spec = job.custom_job["jobSpec"]
    assert (spec["tensorboard"], spec["experiment"], spec["experimentRun"]) == \
        (BOARD, EXPERIMENT, RUN)
    # With Google (not the emulator), the job links its TensorBoard once Vertex names it.
    settings.VERTEX_EMULATOR_ADDR = ""
    attempt = job.current_attempt()
    attempt.vertex_name = "projects/p-1/locations/us-central1/customJobs/42"
    attempt.vertex_job_id = "42"
    attempt.save()
    board = {link.key: link.url for link in links.for_job(job)}.get("tensorboard")
    assert board is not None and "tensorboards+123+experiments+42" in board
    clone = member_client.get(reverse("job-compose"), {"clone": job.pk})
    initial = clone.context["form"].initial
    assert (initial["tensorboard"], initial["experiment"], initial["experiment_run"]) == \
        (BOARD, EXPERIMENT, RUN)
    assert f'value="{BOARD}"' in clone.content.decode()


def test_a_malformed_name_shows_on_its_field(member_client: Client, backend: Backend) -> None:
    response = member_client.post(reverse("job-compose"), form_data(tensorboard="my-board"))
    assert response.status_code in (200, 400)
    assert "full resource name" in errors_shown_on(response.content.decode(), "tensorboard")
    assert Job.objects.count() == 0


def test_the_api_takes_them(member_client: Client, backend: Backend,
                            django_capture_on_commit_callbacks: Any) -> None:
    body = {"name": "tb", "team": "vision", "chief": {"machine_type": "n1-standard-4"},
            "tensorboard": BOARD, "experiment": EXPERIMENT}
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post("/api/v1/jobs/", data=json.dumps(body),
                                      content_type="application/json")
    assert response.status_code == 201, response.content
    assert Job.objects.get().custom_job["jobSpec"]["experiment"] == EXPERIMENT
    bad = member_client.post("/api/v1/jobs/", data=json.dumps({**body, "experiment": "e"}),
                             content_type="application/json")
    assert bad.status_code == 400 and "experiment" in bad.json()
