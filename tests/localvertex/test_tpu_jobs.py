"""A TPU job on the emulator: its replica gets a TPU VM's environment played on the CPU (one JAX
device per chip of the slice; a slice of several VMs runs one process per VM) and the JAX
trainer trains on it, as a v5e job composed for Vertex would, with step events and
checkpoints in its logs."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from localvertex.config import Settings
from localvertex.replicas.environment import (
    LOCALHOST,
    ReplicaSpec,
    build_replicas,
    tpu_env,
    tpu_hosts,
)
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
    env = tpu_env(spec)
    assert env["XLA_FLAGS"] == f"--xla_force_host_platform_device_count={chips}"
    assert (env["JAX_PLATFORMS"], env["TPU_WORKER_ID"]) == ("cpu", "0")
    assert env["TPU_WORKER_HOSTNAMES"] == LOCALHOST


def _replicas(tmp_path: Path, pool: dict) -> list[ReplicaSpec]:
    spec = aiplatform_v1.CustomJobSpec.pb()(worker_pool_specs=[pool])
    return build_replicas(settings=Settings(data_dir=tmp_path), project="p",
                          job_id="7", job_spec=spec)


def test_a_slice_of_two_vms_runs_one_process_per_vm_that_meet_on_the_replicas_port(
        tmp_path: Path):
    hosts = _replicas(tmp_path, tpu_pool("ct5lp-hightpu-4t", "2x4", []))
    assert [(h.task_name, h.host, h.key) for h in hosts] == [
        ("workerpool0-0", 0, "workerpool0-0"), ("workerpool0-0", 1, "workerpool0-0.host1")]
    assert {h.env["XLA_FLAGS"] for h in hosts} == {"--xla_force_host_platform_device_count=4"}
    assert [h.env["TPU_WORKER_ID"] for h in hosts] == ["0", "1"]
    assert {h.env["TPU_WORKER_HOSTNAMES"] for h in hosts} == {"127.0.0.1,127.0.0.1"}
    assert {h.env["JAX_COORDINATOR_PORT"] for h in hosts} == {str(hosts[0].port)}
    assert tpu_hosts(aiplatform_v1.MachineSpec.pb()(
        machine_type="ct5lp-hightpu-4t", tpu_topology="4x4")) == 4
    assert len(_replicas(tmp_path, tpu_pool("ct5lp-hightpu-8t", "2x4", []))) == 1


def test_a_slice_keeps_the_jobs_own_values_and_pytorch_xla_plays_it_in_one_process(
        tmp_path: Path):
    pool = tpu_pool("ct5lp-hightpu-4t", "2x4", [])
    pool["container_spec"]["env"] = [{"name": "XLA_FLAGS", "value": "--mine"}]
    assert {h.env["XLA_FLAGS"] for h in _replicas(tmp_path, pool)} == {"--mine"}
    pool["container_spec"]["env"] = [{"name": "PJRT_DEVICE", "value": "TPU"}]
    [one] = _replicas(tmp_path, pool)
    assert (one.env["CPU_NUM_DEVICES"], one.host) == ("8", 0)


# Host 1 fails its first start; host 0 waits for host 1 to have succeeded, so the job can only
# succeed once the slice has been started again as a whole.
_HOST_PROGRAM = textwrap.dedent("""
    import os, pathlib, sys, time
    host = os.environ["TPU_WORKER_ID"]
    print(f"host {host}: {os.environ['XLA_FLAGS']} of {os.environ['TPU_WORKER_HOSTNAMES']}",
          flush=True)
    if host == "1":
        if not pathlib.Path("failed-once").exists():
            pathlib.Path("failed-once").write_text("")
            sys.exit(3)
        pathlib.Path("host1-done").write_text("")
        sys.exit(0)
    deadline = time.monotonic() + 60
    while not pathlib.Path("host1-done").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    sys.exit(0 if pathlib.Path("host1-done").exists() else 5)
""")


def test_a_host_that_fails_restarts_its_whole_slice(emulator: EmulatorProcess):
    pool = tpu_pool("ct5lp-hightpu-4t", "2x4", [])
    pool["container_spec"]["command"] = [sys.executable, "-c", _HOST_PROGRAM]
    created = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "slice-restart", [pool], scheduling={"restart_job_on_worker_restart": False}))
    job = wait_state(emulator.jobs, created.name,
                     {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=120)
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    said = [(e.resource.labels.get("task_name", ""), e.text_payload) for e in logs
            if e.text_payload]
    assert job.state == State.JOB_STATE_SUCCEEDED, said
    # Every host's lines are the replica's: two starts of each host, four devices each.
    starts = [text for task, text in said if text.startswith("host ")]
    assert sorted(starts) == ["host 0: --xla_force_host_platform_device_count=4 of "
                              "127.0.0.1,127.0.0.1"] * 2 + [
        "host 1: --xla_force_host_platform_device_count=4 of 127.0.0.1,127.0.0.1"] * 2
    assert {task for task, text in said if text.startswith("host ")} == {"workerpool0-0"}
    # One "Restarting replica" line (what the control plane counts as a restart) for the slice.
    restarts = [text for _, text in said if text.startswith("Restarting replica")]
    assert restarts == ["Restarting replica workerpool0-0 with its TPU slice: workerpool0-0 "
                        "(TPU host 1) exited with code 3"], said
    assert any(text.startswith("Restarting workerpool0-0 (TPU host 1) (restart 1 of ")
               for _, text in said), said


def test_gpu_and_cpu_machines_get_no_tpu_environment():
    for machine in ("n1-standard-4", "a2-highgpu-1g", "g2-standard-8"):
        assert tpu_env(aiplatform_v1.MachineSpec.pb()(machine_type=machine)) == {}


def require_jax() -> None:
    missing = [m for m in ("jax", "flax", "optax", "orbax.checkpoint")
               if importlib.util.find_spec(m) is None]
    require(not missing, f"the jax extra is not installed (missing {', '.join(missing)})")


def run_to_success(emulator: EmulatorProcess, name: str, pool: dict, prefix: str,
                   timeout: float) -> dict[str, list[dict]]:
    """Run a one-pool job to its end; it must succeed. Its events, by name, in log order."""
    created = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        name, [pool], base_output_directory={"output_uri_prefix": prefix}))
    job = wait_state(emulator.jobs, created.name,
                     {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=timeout)
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    events = [e for e in json_entries(logs) if "event" in e]
    said = "\n".join(e.text_payload for e in logs if e.text_payload)
    assert job.state == State.JOB_STATE_SUCCEEDED, json.dumps(events)[-2000:] + said[-3000:]
    by_name: dict[str, list[dict]] = {}
    for event in events:
        by_name.setdefault(event["event"], []).append(event)
    return by_name


def test_a_v5e_2x2_jax_job_trains_checkpoints_and_succeeds(emulator: EmulatorProcess):
    require_jax()
    args = ["--preset", "tiny", "--steps", str(STEPS), "--batch-size", "8", "--mesh", "2,2,1",
            "--checkpoint-every", "3", "--eval-every", "0"]
    by_name = run_to_success(emulator, "jax-v5e-2x2", tpu_pool("ct5lp-hightpu-4t", "2x2", args),
                             "gs://bucket/runs/jax-tpu", timeout=300)
    started = by_name["run_started"][0]
    assert started["devices"] == 4
    assert started["dims"] == {"data": 2, "fsdp": 2, "tensor": 1}
    assert [int(e["step"]) for e in by_name["step"]] == list(range(1, STEPS + 1))
    saved = by_name["checkpoint_saved"]
    assert [int(e["step"]) for e in saved] == [3, STEPS]
    assert all("/gcs/bucket/runs/jax-tpu/checkpoints/step-" in e["path"] for e in saved)
    assert by_name["run_finished"][0]["step"] == STEPS


def test_a_v5e_2x4_jax_job_runs_a_process_per_vm_that_train_as_one(emulator: EmulatorProcess):
    """Two TPU VMs (4 chips each) played by two processes that meet in `jax.distributed`:
    one mesh over the eight devices, host 0 speaking for both."""
    require_jax()
    steps = 4
    args = ["--preset", "tiny", "--steps", str(steps), "--batch-size", "8", "--mesh", "2,4,1",
            "--checkpoint-every", "2", "--eval-every", "0"]
    by_name = run_to_success(emulator, "jax-v5e-2x4", tpu_pool("ct5lp-hightpu-4t", "2x4", args),
                             "gs://bucket/runs/jax-2-hosts", timeout=420)
    joined = by_name["hosts"]
    assert {(int(e["process_id"]), int(e["num_processes"])) for e in joined} == {(0, 2), (1, 2)}
    started = by_name["run_started"]
    assert {int(e["rank"]) for e in started} == {0, 1}
    assert {(int(e["world_size"]), int(e["devices"])) for e in started} == {(2, 8)}
    assert started[0]["dims"] == {"data": 2, "fsdp": 4, "tensor": 1}
    # Host 0 speaks for both: each step once (a restarted slice resumes from its checkpoint).
    assert {int(e["step"]) for e in by_name["step"]} == set(range(1, steps + 1))
    assert by_name["run_finished"][-1]["step"] == steps
    assert all("/gcs/bucket/runs/jax-2-hosts/checkpoints/step-" in e["path"]
               for e in by_name["checkpoint_saved"])


@pytest.mark.environment
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
    by_name = run_to_success(emulator, "xla-v5e-2x2", pool, "gs://bucket/runs/xla-tpu",
                             timeout=600)
    started = by_name["run_started"][0]
    assert (started["strategy"], started["devices"]) == ("xla", 4)
    assert started["dims"] == {"data": 4, "fsdp": 1}
    assert [int(e["step"]) for e in by_name["step"]] == list(range(1, STEPS + 1))
    saved = by_name["checkpoint_saved"]
    assert [int(e["step"]) for e in saved] == [3, STEPS]
    assert all("/gcs/bucket/runs/xla-tpu/checkpoints/step-" in e["path"] for e in saved)
