"""The API takes the form's fields or a Vertex CustomJob, with the same validation as the form."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.models import ComposerSettings, JobTemplate
from controlplane.runs.models import Job
from controlplane.teams.models import Team, TeamPolicy
from tests.vertexplan.composer.helpers import A100_8, compose_request, job
from vertexplan import presets


def post(client: Client, name: str, body: Any, query: str = "", **kwargs: Any) -> Any:
    return client.post(reverse(name) + query, data=json.dumps(body),
                       content_type="application/json", **kwargs)


def rest_json(**overrides: Any) -> dict[str, Any]:
    """A Vertex CustomJob as a script already has it."""
    pool = {"machineSpec": {"machineType": "a2-highgpu-4g", "acceleratorType": "NVIDIA_TESLA_A100",
                            "acceleratorCount": 4},
            "replicaCount": "1",
            "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t/trainer:1",
                              "command": ["python", "train.py"]}}
    pool.update(overrides)
    return {"displayName": "script-job", "jobSpec": {"workerPoolSpecs": [pool],
                                                     "scheduling": {"strategy": "SPOT"}}}


def test_a_custom_job_in_rest_json_creates_a_job(member_client: Client, backend: Backend,
                                                 django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(member_client, "api-job-list", rest_json())
    assert response.status_code == 201, response.content
    stored = Job.objects.get()
    assert stored.name == "script-job"
    assert stored.custom_job["jobSpec"]["scheduling"]["strategy"] == "SPOT"
    assert stored.request["command"] == ["python", "train.py"]


def test_an_invalid_custom_job_is_400_keyed_by_the_bad_fields_path(member_client: Client,
                                                                   backend: Backend) -> None:
    body = rest_json(machineSpec={"machineType": "a2-highgpu-4g",
                                  "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 3})
    response = post(member_client, "api-job-list", body)
    assert response.status_code == 400
    errors = response.json()
    [message] = errors["jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"]
    assert "a2-highgpu-4g takes 4 NVIDIA_TESLA_A100, not 3" in message
    assert "4" in message  # the valid value
    assert Job.objects.count() == 0


def test_a_custom_jobs_strategy_errors_are_keyed_by_where_they_were_sent(
        member_client: Client, backend: Backend) -> None:
    ds = {"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4,
          "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}
    body = rest_json(containerSpec={"imageUri": "img:1", "command": ["deepspeed", "t.py"],
                                    "env": [{"name": "CP_DEEPSPEED_CONFIG_JSON",
                                             "value": json.dumps(ds)}]})
    response = post(member_client, "api-job-list", body)
    assert response.status_code == 400
    path = "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value"
    assert "global batch 100 must equal" in response.json()[path][0]


def test_form_fields_still_work_and_errors_stay_nested(member_client: Client,
                                                       backend: Backend) -> None:
    body = {"name": "x", "spot": True, "chief": {"machine_type": "n1-standard-4",
                                                 "persistent_disk": 2000}}
    response = post(member_client, "api-job-list", body)
    assert response.status_code == 400
    assert "no persistent data disk" in response.json()["chief"]["persistent_disk"][0]
    body = {"name": "x", "strategy": "zero2", "chief": A100_8,
            "batch": {"global_batch_size": 100, "micro_batch_size": 4}}
    response = post(member_client, "api-job-list", body)
    assert response.status_code == 400
    assert "global batch 100" in response.json()["batch"]["global_batch_size"][0]


def test_validate_returns_errors_and_the_memory_plan_and_creates_nothing(
        member_client: Client, backend: Backend) -> None:
    body = job(chief=A100_8, strategy="zero3", precision="bf16",
               model={"parameters": 13_000_000_000})
    response = post(member_client, "api-job-validate", body)
    assert response.status_code == 200
    data = response.json()
    assert data["valid"] is True
    assert data["memory_plan"]["strategy"] == "zero3" and data["memory_plan"]["fits"] is True
    assert data["deepspeed_config"]["zero_optimization"]["stage"] == 3
    assert data["world_size"] == 8
    bad = post(member_client, "api-job-validate", {**body, "strategy": "ddp"}).json()
    assert bad["valid"] is False
    assert "does not fit" in bad["errors"]["model.parameters"][0]
    assert "zero3" in bad["suggestions"]["model.parameters"]
    assert Job.objects.count() == 0


def test_validate_takes_rest_json_too(member_client: Client, backend: Backend) -> None:
    data = post(member_client, "api-job-validate",
                rest_json(replicaCount="2")).json()
    assert data["valid"] is False
    assert "jobSpec.workerPoolSpecs[0].replicaCount" in data["errors"]


def test_the_teams_memory_policy_can_warn_instead(member_client: Client, backend: Backend,
                                                 team: Team) -> None:
    ComposerSettings.objects.create(team=team, memory_policy="warn")
    body = job(chief=A100_8, precision="bf16", model={"parameters": 13_000_000_000})
    data = post(member_client, "api-job-validate", body).json()
    assert data["valid"] is True and data["memory_policy"] == "warn"
    assert "does not fit" in data["warnings"]["model.parameters"][0]


@pytest.mark.parametrize("fmt", ["yaml", "json", "python"])
def test_export_and_import_through_the_api(member_client: Client, backend: Backend,
                                           fmt: str) -> None:
    body = presets.get("vlm-finetune-4x8-a100-zero2").job_request()
    response = post(member_client, "api-job-export", body, f"?fmt={fmt}")
    assert response.status_code == 200
    text = response.content.decode()
    if fmt == "python":
        compile(text, "job.py", "exec")
        return
    imported = member_client.post(reverse("api-job-import"), data=text,
                                  content_type="application/yaml").json()
    assert imported["valid"] is True, imported["errors"]
    assert compose_request(imported["request"]).custom_job == compose_request(body).custom_job


def test_export_of_an_invalid_job_is_400(member_client: Client, backend: Backend) -> None:
    response = post(member_client, "api-job-export", job(chief={"machine_type": "nope"}))
    assert response.status_code == 400


def test_an_export_is_a_document_not_bound_by_the_teams_policy(member_client: Client,
                                                              backend: Backend) -> None:
    # The team allows no service account and writes under its own prefix only; the job names
    # its own of both, as a gcloud config from elsewhere does.
    TeamPolicy.objects.create(team=Team.objects.get(), output_prefix="gs://team-bucket/out")
    body = rest_json(containerSpec={"imageUri": "us-docker.pkg.dev/p/t/trainer:1",
                                    "command": ["python", "train.py"]})
    body["jobSpec"]["serviceAccount"] = "trainer@elsewhere.iam.gserviceaccount.com"
    body["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "gs://their-bucket/runs"}
    judged = post(member_client, "api-job-validate", body).json()
    assert judged["valid"] is False and "jobSpec.serviceAccount" in judged["errors"], judged
    for fmt in ("yaml", "json"):
        response = post(member_client, "api-job-export", body, f"?fmt={fmt}")
        assert response.status_code == 200, response.content
        text = response.content.decode()
        assert "trainer@elsewhere.iam.gserviceaccount.com" in text
        assert "gs://their-bucket/runs" in text
    # What Vertex itself would refuse is still refused.
    body["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "0"
    assert post(member_client, "api-job-export", body).status_code == 400
    assert Job.objects.count() == 0


def test_import_reports_the_documents_errors_by_path(member_client: Client,
                                                     backend: Backend) -> None:
    text = yaml.safe_dump(rest_json(replicaCount="0")["jobSpec"])
    data = member_client.post(reverse("api-job-import"), data=text,
                              content_type="text/plain").json()
    assert data["kind"] == "CustomJobSpec" and data["valid"] is False
    assert "jobSpec.workerPoolSpecs[0].replicaCount" in data["errors"]


def test_a_stored_job_exports(member_client: Client, backend: Backend, make_job: Any,
                              team: Team, member: Any) -> None:
    stored = make_job(team, member)
    response = member_client.get(reverse("api-job-export-stored", args=[stored.pk]),
                                 {"fmt": "yaml"})
    assert response.status_code == 200
    assert response.content.decode().startswith("# gcloud ai custom-jobs create")


def test_presets_and_templates(member_client: Client, team_admin_client: Client,
                               backend: Backend, team: Team, viewer: Any) -> None:
    listed = member_client.get(reverse("api-preset-list")).json()
    assert {p["slug"] for p in listed} == {p.slug for p in presets.PRESETS}
    # Templates belong to the team's admins; a member uses them but may not save one.
    refused = post(member_client, "api-template-list", {"name": "nightly", "request": job()})
    assert refused.status_code == 403 and "admins of team 'vision'" in refused.json()["detail"]
    assert not JobTemplate.objects.exists()
    created = post(team_admin_client, "api-template-list",
                   {"name": "nightly", "description": "d", "request": job(strategy="zero2",
                                                                         chief=A100_8)})
    assert created.status_code == 201, created.content
    assert created.json()["team"] == "vision"
    again = post(team_admin_client, "api-template-list", {"name": "nightly", "request": job()})
    assert again.status_code == 400 and "already has a template" in again.json()["name"][0]
    from_rest = post(team_admin_client, "api-template-list", {"name": "from-vertex",
                                                              "request": rest_json()})
    assert from_rest.status_code == 201
    assert from_rest.json()["request"]["command"] == ["python", "train.py"]
    template = JobTemplate.objects.get(name="nightly")
    assert member_client.get(reverse("api-template-detail", args=[template.pk])).json()[
        "request"]["strategy"] == "zero2"
    viewer_client = Client()
    viewer_client.force_login(viewer)
    assert viewer_client.delete(reverse("api-template-detail", args=[template.pk])
                                ).status_code == 403
    assert member_client.delete(reverse("api-template-detail", args=[template.pk])
                                ).status_code == 403
    assert team_admin_client.delete(reverse("api-template-detail", args=[template.pk])
                                    ).status_code == 204


def test_a_wandb_launch_queue_config_round_trips_through_the_api(member_client: Client,
                                                                 backend: Backend) -> None:
    body = job(name="launch", spot=True, chief={"machine_type": "n1-standard-4"},
               workers={"replica_count": 2})
    response = post(member_client, "api-job-export", body, "?fmt=wandb")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/json")
    assert response["X-Not-Exported"] == "jobSpec.scheduling.strategy"
    config = response.json()
    assert set(config["vertex"]) == {"spec", "run"}
    imported = member_client.post(reverse("api-job-import") + "?name=launch",
                                  data=response.content,
                                  content_type="application/json").json()
    assert imported["kind"] == "W&B Launch queue config"
    assert imported["valid"] is True, imported["errors"]
    back = compose_request({**imported["request"], "spot": True}).custom_job
    assert back == compose_request(body).custom_job
