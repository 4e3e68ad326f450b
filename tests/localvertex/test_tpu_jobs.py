"""A TPU job on the emulator: its replica gets a TPU VM's environment played on the CPU (one JAX
device per chip of the slice) and the JAX trainer trains on it, as a v5e job composed for
Vertex would, with step events and checkpoints in its logs."""

from __future__ import annotations

import importlib.util
import json

import pytest
from google.cloud import aiplatform_v1

from localvertex import environment
from tests.conftest import require
from tests.localvertex.helpers import (
    PARENT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    wait_state,
)
from tests.xla_env import ensure_xla_env

pytestmark = pytest.mark.trainers

State = aiplatform_v1.JobState
STEPS = 6


def tpu_pool(machine_type: str, topology: str, args: list[str]) -> dict:
    return {
        "machine_spec": {"machine_type": machine_type, "tpu_topology": topology},
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/test/jax-tpu:latest",
            "command": ["python", "-m", "trainers.jax"],
            "args": args,
        },
    }


@pytest.mark.parametrize(("machine_type", "topology", "chips"), [
    ("ct5lp-hightpu-4t", "2x2", 4),
    ("ct5lp-hightpu-4t", "2x4", 8),  # two VMs on Vertex, one host holding 8 devices here
    ("ct6e-standard-8t", "2x4", 8),
    ("ct5lp-hightpu-1t", "", 1),
])
def test_a_tpu_replica_sees_one_cpu_device_per_chip(machine_type, topology, chips):
    spec = aiplatform_v1.MachineSpec.pb()(machine_type=machine_type, tpu_topology=topology)
    env = environment.tpu_env(spec)
    assert env["XLA_FLAGS"] == f"--xla_force_host_platform_device_count={chips}"
    assert (env["JAX_PLATFORMS"], env["TPU_WORKER_ID"]) == ("cpu", "0")
    assert env["TPU_WORKER_HOSTNAMES"] == environment.LOCALHOST


def test_gpu_and_cpu_machines_get_no_tpu_environment():
    for machine in ("n1-standard-4", "a2-highgpu-1g", "g2-standard-8"):
        assert environment.tpu_env(aiplatform_v1.MachineSpec.pb()(machine_type=machine)) == {}


def test_a_v5e_2x2_jax_job_trains_checkpoints_and_succeeds(emulator: EmulatorProcess):
    missing = [m for m in ("jax", "flax", "optax", "orbax.checkpoint")
               if importlib.util.find_spec(m) is None]
    require(not missing, f"the jax extra is not installed (missing {', '.join(missing)})")
    args = ["--preset", "tiny", "--steps", str(STEPS), "--batch-size", "8", "--mesh", "2,2,1",
            "--checkpoint-every", "3", "--eval-every", "0"]
    created = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "jax-v5e-2x2",
            [tpu_pool("ct5lp-hightpu-4t", "2x2", args)],
            base_output_directory={"output_uri_prefix": "gs://bucket/runs/jax-tpu"},
        ),
    )
    job = wait_state(emulator.jobs, created.name,
                     {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=300)
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    events = [e for e in json_entries(logs) if "event" in e]
    assert job.state == State.JOB_STATE_SUCCEEDED, json.dumps(events)[-3000:]
    by_name = {}
    for event in events:
        by_name.setdefault(event["event"], []).append(event)
    started = by_name["run_started"][0]
    assert started["devices"] == 4
    assert started["dims"] == {"data": 2, "fsdp": 2, "tensor": 1}
    assert [int(e["step"]) for e in by_name["step"]] == list(range(1, STEPS + 1))
    saved = by_name["checkpoint_saved"]
    assert [int(e["step"]) for e in saved] == [3, STEPS]
    assert all("/gcs/bucket/runs/jax-tpu/checkpoints/step-" in e["path"] for e in saved)
    assert by_name["run_finished"][0]["step"] == STEPS


def test_a_v5e_2x2_pytorch_xla_job_trains_on_cpu_pjrt_devices_and_succeeds(
        emulator: EmulatorProcess):
    """PJRT_DEVICE=TPU from the composed job becomes the CPU PJRT device, one per chip, and
    the replica's python is the PyTorch/XLA environment's."""
    ensure_xla_env()
    pool = tpu_pool("ct5lp-hightpu-4t", "2x2", [
        "--preset", "tiny", "--steps", str(STEPS), "--batch-size", "8", "--mesh", "4,1",
        "--checkpoint-every", "3", "--eval-every", "0"])
    pool["container_spec"]["command"] = ["python", "-m", "trainers.xla"]
    pool["container_spec"]["env"] = [{"name": "PJRT_DEVICE", "value": "TPU"}]
    created = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "xla-v5e-2x2", [pool],
        base_output_directory={"output_uri_prefix": "gs://bucket/runs/xla-tpu"}))
    job = wait_state(emulator.jobs, created.name,
                     {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=600)
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    events = [e for e in json_entries(logs) if "event" in e]
    said = "\n".join(e.text_payload for e in logs if e.text_payload)
    assert job.state == State.JOB_STATE_SUCCEEDED, json.dumps(events)[-2000:] + said[-4000:]
    by_name: dict[str, list[dict]] = {}
    for event in events:
        by_name.setdefault(event["event"], []).append(event)
    started = by_name["run_started"][0]
    assert (started["strategy"], started["devices"]) == ("xla", 4)
    assert started["dims"] == {"data": 4, "fsdp": 1}
    assert [int(e["step"]) for e in by_name["step"]] == list(range(1, STEPS + 1))
    saved = by_name["checkpoint_saved"]
    assert [int(e["step"]) for e in saved] == [3, STEPS]
    assert all("/gcs/bucket/runs/xla-tpu/checkpoints/step-" in e["path"] for e in saved)
