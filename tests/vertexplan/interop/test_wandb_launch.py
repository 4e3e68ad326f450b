"""W&B Launch Vertex queue configs: a composed job exported as one reads back as the same job
request, one written as the wandb docs show imports into the composer, and what a queue config
cannot carry is named, not dropped silently."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.vertexplan.composer.helpers import compose_request
from vertexplan import interop
from vertexplan.interop import wandb_launch

REGION = "us-central1"
JOBS = [
    {"name": "ddp", "chief": {"machine_type": "n1-standard-4"}, "workers": {"replica_count": 2},
     "args": ["--preset", "tiny"], "env": {"A": "b"}},
    {"name": "a100", "chief": {"machine_type": "a2-highgpu-1g",
                               "accelerator_type": "NVIDIA_TESLA_A100", "accelerator_count": 1},
     "args": ["--preset", "small", "--steps", "100"], "timeout_hours": 3,
     "base_output_directory": "gs://team-bucket/runs/a100",
     "service_account": "trainer@p.iam.gserviceaccount.com"},
]
# The queue config of wandb's docs (platform/launch/setup-vertex.mdx), as a queue holds it.
DOCS_CONFIG = {"vertex": {
    "spec": {"worker_pool_specs": [{
        "machine_spec": {"machine_type": "n1-standard-4",
                         "accelerator_type": "ACCELERATOR_TYPE_UNSPECIFIED",
                         "accelerator_count": 0},
        "replica_count": 1,
        "container_spec": {"image_uri": "${image_uri}"}}],
        "staging_bucket": "gs://my-staging-bucket"},
    "run": {"restart_job_on_worker_restart": False}}}


def _composed(body: dict[str, Any]) -> dict[str, Any]:
    composition = compose_request(body)
    assert not composition.errors, composition.errors
    return composition.custom_job


@pytest.mark.parametrize("body", JOBS, ids=[j["name"] for j in JOBS])
def test_an_exported_queue_config_reads_back_as_the_same_job(body: dict[str, Any]) -> None:
    custom_job = _composed(body)
    text = interop.export(custom_job, "wandb", region=REGION)
    config = json.loads(text)
    assert set(config) == {"vertex"} and set(config["vertex"]) == {"spec", "run"}
    back = interop.import_text(text, region=REGION, name=custom_job["displayName"])
    assert back.kind == wandb_launch.KIND and not back.errors, back.errors
    rest = interop.import_text(interop.export(custom_job, "json", region=REGION),
                               region=REGION)
    # The same job as the REST JSON export gives, but for the scheduling strategy, which a
    # queue config cannot carry (STANDARD is Vertex's default anyway).
    assert back.request.pop("scheduling_strategy", None) is None
    assert rest.request.pop("scheduling_strategy") == "STANDARD"
    assert back.request == rest.request
    spec, original = back.custom_job["jobSpec"], dict(custom_job["jobSpec"])
    assert spec["workerPoolSpecs"] == original["workerPoolSpecs"]
    assert spec["scheduling"] == {k: v for k, v in original["scheduling"].items()
                                  if k != "strategy"}
    # The queue config says what the SDK takes: numbers as numbers, timeout in seconds.
    launch_spec, run = config["vertex"]["spec"], config["vertex"]["run"]
    assert all(isinstance(p["replica_count"], int) for p in launch_spec["worker_pool_specs"])
    if body.get("timeout_hours"):
        assert run["timeout"] == 3 * 3600
    if body.get("base_output_directory"):
        assert launch_spec["staging_bucket"] == "gs://team-bucket"
        assert launch_spec["base_output_dir"] == "gs://team-bucket/runs/a100"
        assert run["service_account"] == body["service_account"]


def test_experiment_and_tensorboard_travel_in_run() -> None:
    custom_job = _composed(JOBS[0])
    board = "projects/p/locations/us-central1/tensorboards/5"
    custom_job["jobSpec"] = {**custom_job["jobSpec"], "tensorboard": board,
                             "experiment": "exp-a", "experimentRun": "run-1"}
    text = interop.export(custom_job, "wandb", region=REGION)
    run = json.loads(text)["vertex"]["run"]
    assert (run["tensorboard"], run["experiment"], run["experiment_run"]) == (
        board, "exp-a", "run-1")
    spec = interop.import_text(text, region=REGION, name="x").custom_job["jobSpec"]
    assert (spec["tensorboard"], spec["experiment"], spec["experimentRun"]) == (
        board, "exp-a", "run-1")


def test_the_docs_queue_config_imports_into_the_composer() -> None:
    for text in (json.dumps(DOCS_CONFIG), yaml.safe_dump(DOCS_CONFIG),
                 json.dumps({"gcp-vertex": DOCS_CONFIG["vertex"]})):
        imported = interop.import_text(text, region=REGION, filename="queue.yaml")
        assert imported.kind == wandb_launch.KIND and not imported.errors, imported.errors
        request = imported.request
        assert request["name"] == "queue"
        assert request["chief"] == {"machine_type": "n1-standard-4"}
        assert request["restart_job_on_worker_restart"] is False
        assert request["image_uri"] == "${image_uri}"
        assert any("placeholder" in w for w in imported.warnings)
        assert any("entry point" in w for w in imported.warnings)
    # With a real image the request composes into a job.
    request = {**request, "image_uri": "us-docker.pkg.dev/p/r/trainer:1"}
    assert not compose_request(request).errors


def test_what_a_queue_config_cannot_carry_is_named() -> None:
    spot = _composed({"name": "spot", "spot": True, "chief": {"machine_type": "n1-standard-4"},
                      "args": []})
    assert wandb_launch.unsupported(spot) == ["jobSpec.scheduling.strategy"]
    assert "SPOT" not in interop.export(spot, "wandb", region=REGION)
    assert wandb_launch.unsupported(_composed(JOBS[0])) == []


def test_hostile_strings_stay_data() -> None:
    hostile = '"}, "run": {"service_account": "evil@x"}, "x": {"'
    custom_job = _composed({**JOBS[0], "env": {"A": hostile}})
    config = json.loads(interop.export(custom_job, "wandb", region=REGION))
    env = config["vertex"]["spec"]["worker_pool_specs"][0]["container_spec"]["env"]
    assert {"name": "A", "value": hostile} in env
    assert "service_account" not in config["vertex"]["run"]
