"""The job endpoints take every form gcloud and the SDK accept, keep strings byte for byte and
refuse unknown fields on their path, as Vertex would."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from tests.vertexplan.composer.helpers import compose_request

PACKAGE = {"executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:"
                                 "latest",
           "package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"],
           "python_module": "trainer.task"}


def validate(client: Client, body: Any, query: str = "") -> dict[str, Any]:
    response = client.post(reverse("api-job-validate") + query, data=json.dumps(body),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def pool0(data: dict[str, Any]) -> dict[str, Any]:
    return data["custom_job"]["jobSpec"]["workerPoolSpecs"][0]


def test_command_args_and_env_keep_their_whitespace(member_client: Client,
                                                    backend: Backend) -> None:
    body = {"name": "script", "image_uri": "gcr.io/p/i:1", "command": ["bash", "-c"],
            "args": ["set -e\n  python train.py  \n"], "env": {"PAD": "  x  ", "NL": "a\n"},
            "chief": {"machine_type": "n1-standard-4"}}
    data = validate(member_client, body)
    assert data["valid"] is True, data["errors"]
    container = pool0(data)["containerSpec"]
    assert container["args"] == ["set -e\n  python train.py  \n"]
    assert {e["name"]: e["value"] for e in container["env"]} == {"PAD": "  x  ", "NL": "a\n"}


def test_a_custom_job_with_a_single_pool_mapping_and_scalar_args(member_client: Client,
                                                                 backend: Backend) -> None:
    body = {"displayName": "gcloud-shaped", "jobSpec": {"workerPoolSpecs": {
        "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1,
        "containerSpec": {"imageUri": "gcr.io/p/i:1", "command": "/bin/train",
                          "args": "--epochs=10"}}}}
    data = validate(member_client, body)
    assert data["valid"] is True, data["errors"]
    assert pool0(data)["containerSpec"]["args"] == ["--epochs=10"]
    assert pool0(data)["containerSpec"]["command"] == ["/bin/train"]


def test_snake_case_sdk_dicts_validate(member_client: Client, backend: Backend) -> None:
    body = {"display_name": "sdk", "job_spec": {"worker_pool_specs": [{
        "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
        "container_spec": {"image_uri": "gcr.io/p/i:1"}}]}}
    data = validate(member_client, body)
    assert data["valid"] is True, data["errors"]


def test_unknown_fields_are_refused_on_their_path_with_the_nearest_name(
        member_client: Client, backend: Backend) -> None:
    body = {"displayName": "spot?", "priority": "HIGH", "jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                             "replicaCount": "1", "useSpot": True,
                             "containerSpec": {"imageUri": "gcr.io/p/i:1"}}],
        "scheduling": {"preemptible": True}}}
    data = validate(member_client, body)
    assert data["valid"] is False
    errors = data["errors"]
    assert "SPOT" in errors["jobSpec.workerPoolSpecs[0].useSpot"][0]
    assert "SPOT" in errors["jobSpec.scheduling.preemptible"][0]
    assert "priority" in errors


def test_a_python_package_job_through_the_api(member_client: Client, backend: Backend) -> None:
    body = {"name": "pkg", "python_package": PACKAGE, "args": ["--lr", "0.1"],
            "chief": {"machine_type": "n1-standard-4"}}
    data = validate(member_client, body)
    assert data["valid"] is True, data["errors"]
    spec = pool0(data)["pythonPackageSpec"]
    assert spec["pythonModule"] == "trainer.task" and spec["args"] == ["--lr", "0.1"]
    assert "containerSpec" not in pool0(data)


def test_import_names_a_gcloud_file_and_reads_python(member_client: Client,
                                                     backend: Backend) -> None:
    text = ("workerPoolSpecs:\n  machineSpec: {machineType: n1-standard-4}\n  replicaCount: 1\n"
            "  containerSpec: {imageUri: gcr.io/p/i:1}\n")
    data = member_client.post(reverse("api-job-import") + "?name=from-flag", data=text,
                              content_type="text/plain").json()
    assert data["valid"] is True, data["errors"]
    assert data["request"]["name"] == "from-flag"
    named = member_client.post(reverse("api-job-import") + "?filename=configs/nightly.yaml",
                               data=text, content_type="text/plain").json()
    assert named["request"]["name"] == "nightly"
    body = {"name": "py", "chief": {"machine_type": "n1-standard-4"}}
    exported = member_client.post(reverse("api-job-export") + "?fmt=python",
                                  data=json.dumps(body), content_type="application/json")
    python = member_client.post(reverse("api-job-import"), data=exported.content.decode(),
                                content_type="text/plain").json()
    assert python["valid"] is True, python["errors"]
    assert compose_request(python["request"]).custom_job == compose_request(
        {**body, "region": "us-central1"}).custom_job


def test_an_unknown_request_field_at_any_level_names_the_nearest(member_client: Client,
                                                                 backend: Backend) -> None:
    body = {"name": "typo", "chief": {"machine_type": "n1-standard-4", "acelerator_count": 1},
            "schedulng_strategy": "SPOT"}
    # A field the form does not have is not a job Vertex would refuse but a body the schema
    # refuses: a 400, each unknown key on its own path with the nearest name.
    response = member_client.post(reverse("api-job-validate"), data=json.dumps(body),
                                  content_type="application/json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert "did you mean scheduling_strategy?" in errors["schedulng_strategy"][0]
    assert "did you mean accelerator_count?" in errors["chief"]["acelerator_count"][0]


def test_import_reads_a_python_jobs_run_arguments_and_refuses_one_it_cannot_read(
        member_client: Client, backend: Backend) -> None:
    text = ('from google.cloud import aiplatform\n'
            'job = aiplatform.CustomJob(display_name="sdk", worker_pool_specs=[{\n'
            '    "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,\n'
            '    "container_spec": {"image_uri": "gcr.io/p/i:1"}}])\n')
    spot = text + "job.run(scheduling_strategy=aiplatform.gapic.Scheduling.Strategy.SPOT)\n"
    data = member_client.post(reverse("api-job-import"), data=spot,
                              content_type="text/plain").json()
    assert data["valid"] is True, data["errors"]
    assert data["request"]["scheduling_strategy"] == "SPOT"
    unread = text + "import os\njob.run(scheduling_strategy=os.environ['STRATEGY'])\n"
    data = member_client.post(reverse("api-job-import"), data=unread,
                              content_type="text/plain").json()
    assert data["valid"] is False
    assert "not a literal" in data["errors"]["run(scheduling_strategy=)"][0]
