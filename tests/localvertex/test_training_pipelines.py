"""A TrainingPipeline carries on across an emulator restart, as a CustomJob does: the same
backing CustomJob is followed to its end and the model uploaded. (The SDK's flows are
test_sdk_training_pipelines.py; this one uses Google's GAPIC client to see every state.)"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.pipeline_service.transports import (
    PipelineServiceGrpcTransport,
)
from google.protobuf import json_format, struct_pb2

from localvertex.pipelines.custom_task import CUSTOM_TASK
from localvertex.replicas.storage import local_path
from tests.localvertex.helpers import PARENT, EmulatorProcess, wait_for

State = aiplatform_v1.PipelineState
BASE = "gs://pipelines/restart"

# Waits for the test's "go" file beside its model folder, then writes its model.
TRAIN = textwrap.dedent(
    """
    import os, time
    model_dir = os.environ["AIP_MODEL_DIR"]
    go = os.path.join(os.path.dirname(model_dir.rstrip("/")), "go")
    while not os.path.exists(go):
        time.sleep(0.05)
    os.makedirs(model_dir, exist_ok=True)
    open(os.path.join(model_dir, "model.txt"), "w").write("trained")
    """
)


def _client(emu: EmulatorProcess) -> aiplatform_v1.PipelineServiceClient:
    channel = emu.channel()
    return aiplatform_v1.PipelineServiceClient(
        transport=PipelineServiceGrpcTransport(channel=channel))


def test_a_pipeline_carries_on_across_an_emulator_restart(
    start_emulator: Callable[..., EmulatorProcess],
) -> None:
    emu = start_emulator()
    inputs = struct_pb2.Value()
    json_format.ParseDict({
        "worker_pool_specs": [{
            "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
            "container_spec": {"image_uri": "us-docker.pkg.dev/test/trainer:latest",
                               "command": ["python", "-c", TRAIN]},
        }],
        "base_output_directory": {"output_uri_prefix": BASE},
    }, inputs)
    pipeline = _client(emu).create_training_pipeline(parent=PARENT, training_pipeline={
        "display_name": "restarted", "training_task_definition": CUSTOM_TASK,
        "training_task_inputs": inputs,
        "model_to_upload": {"display_name": "restarted-model", "container_spec": {
            "image_uri": "us-docker.pkg.dev/test/server:latest", "command": ["serve"]}},
    })
    assert pipeline.state == State.PIPELINE_STATE_QUEUED
    running = wait_for(lambda: (p := _client(emu).get_training_pipeline(name=pipeline.name))
                       .state == State.PIPELINE_STATE_RUNNING and p)
    backing = running.training_task_metadata["backingCustomJob"]

    emu.restart()
    Path(local_path(emu.data_dir, f"{BASE}/go")).write_text("")
    client = _client(emu)
    done = wait_for(lambda: (p := client.get_training_pipeline(name=pipeline.name))
                    .state in (State.PIPELINE_STATE_SUCCEEDED, State.PIPELINE_STATE_FAILED)
                    and p)

    assert done.state == State.PIPELINE_STATE_SUCCEEDED, done.error
    assert done.training_task_metadata["backingCustomJob"] == backing
    assert done.start_time and done.end_time
    model = done.model_to_upload
    assert model.name.startswith(f"{PARENT}/models/") and model.version_id == "1"
    assert model.artifact_uri == f"{BASE}/model/"
    assert model.training_pipeline == pipeline.name
    assert emu.jobs.get_custom_job(name=backing).state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED
