"""The form's activation checkpointing menu and the API's activation_checkpointing reach the
CustomJob the backend is sent: the built-in trainer's arguments carry the mode, and the trainer
reads it back. Jobs saved with the older true/false open and submit as full/none."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.compose.forms import JobForm, initial_from_request
from controlplane.runs import lifecycle
from controlplane.runs.models import Job
from tests.compose.test_compose_page import form_data
from tests.fakes import FakeBackend

MODEL = {"model_parameters_b": "0.0001", "model_hidden_size": "64", "model_layers": "2",
         "model_sequence_length": "64"}


def _submitted_args(backend: FakeBackend, job: Job) -> list[str]:
    lifecycle.submit(job.pk)
    (created,) = backend.created
    return created["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]


@pytest.mark.parametrize(("chosen", "flag"), [("selective", "selective"), ("full", "full"),
                                              ("none", None)])
def test_the_forms_choice_reaches_the_trainers_arguments(
        member_client: Client, backend: FakeBackend, chosen: str, flag: str | None,
        django_capture_on_commit_callbacks: Any) -> None:
    from trainers.torch.main import build_parser, config_from_args

    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), form_data(
            **MODEL, model_activation_checkpointing=chosen))
    assert response.status_code == 302, response.context["form"].errors
    job = Job.objects.get()
    args = _submitted_args(backend, job)
    if flag is None:
        assert "--activation-checkpointing" not in args
        assert "activation_checkpointing" not in job.request["model"]
    else:
        assert args[args.index("--activation-checkpointing") + 1] == flag
        assert job.request["model"]["activation_checkpointing"] == flag
    # What the replica runs reads it as it was chosen.
    config = config_from_args(build_parser().parse_args(args), {})
    assert config.activation_checkpointing == chosen


def test_the_form_shows_a_menu_of_the_three_modes(member_client: Client,
                                                  backend: FakeBackend) -> None:
    page = member_client.get(reverse("job-compose")).content.decode()
    assert '<select name="model_activation_checkpointing"' in page
    for label in ("None", "Selective (attention recomputed)", "Full (each block recomputed)"):
        assert f">{label}</option>" in page


def test_a_job_saved_with_true_opens_as_full_and_false_as_none() -> None:
    request = {"name": "old", "chief": {"machine_type": "n1-standard-4"},
               "model": {"parameters": 100_000, "activation_checkpointing": True}}
    initial = initial_from_request(request)
    assert initial["model_activation_checkpointing"] == "full"
    assert "advanced" not in initial  # nothing left over for the JSON box
    request["model"]["activation_checkpointing"] = False
    assert initial_from_request(request).get("model_activation_checkpointing") in (None, "none")
    assert JobForm.base_fields["model_activation_checkpointing"].choices[0] == ("none", "None")


def test_the_api_takes_modes_and_the_older_booleans_and_names_a_bad_value(
        member_client: Client, backend: FakeBackend,
        django_capture_on_commit_callbacks: Any) -> None:
    def post(model: dict[str, Any]) -> Any:
        body = {"name": "api-job", "chief": {"machine_type": "n1-standard-4"},
                "model": {"parameters": 100_000, **model}}
        with django_capture_on_commit_callbacks(execute=False):
            return member_client.post(reverse("api-job-list") + "?team=vision",
                                      data=json.dumps(body), content_type="application/json")

    bad = post({"activation_checkpointing": "partial"})
    assert bad.status_code == 400
    assert bad.json()["model"]["activation_checkpointing"] == [
        "model.activation_checkpointing must be one of none, selective, full, not 'partial'"]
    assert post({"activation_checkpointing": True}).status_code == 201
    job = Job.objects.get()
    assert job.request["model"]["activation_checkpointing"] == "full"
    args = _submitted_args(backend, job)
    assert args[args.index("--activation-checkpointing") + 1] == "full"
