"""Each preset that runs the built-in trainer, submitted on the local stack with a few steps,
trains as composed and reaches SUCCEEDED: a replica with N GPUs runs N processes (the launcher
the composer writes decides), so the world size matches the batch the composer sized; a TPU
slice runs one JAX process per TPU VM, a CPU device per chip, joined in one mesh. A preset
whose model does not fit this machine runs scaled down (the Llama-3-8B layout as a two-layer
Llama at tp2 x fsdp4), and submitting it at full size is refused with the memory figures."""

from __future__ import annotations

import io
import json
import math
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from config.devstack import Stack
from controlplane.compose import local_machine
from tests.stacks import Api
from vertexplan import catalog, composer, presets
from vertexplan.composer import parallelism

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
SMALL_STEPS = ["--preset", "tiny", "--steps", "4", "--checkpoint-every", "2"]
# Presets that run a program of their own (their `needs` says which): nothing of theirs ships
# with this project to run locally.
# The local stack runs one process per GPU on two CPU cores: a preset of more than eight (the
# Llama-3-70B TP8 x PP2 x DP2 one is 32 ranks) is shown by the tp x pp x dp trainer tests
# and tests/integration/test_model_parallel.py at a size the machine holds. A TPU slice is one
# process per VM, each holding a CPU device per chip of its VM (localvertex/environment.py).
LOCAL_PROCESSES = 8


def local_processes(preset: presets.Preset) -> int:
    composed = composer.compose(composer.JobRequest.from_dict(preset.job_request()))
    if str(preset.request.get("strategy", "")).startswith("tpu"):
        pools = composed.custom_job["jobSpec"]["workerPoolSpecs"]
        return sum(catalog.describe_machine_spec(p["machineSpec"]).vms for p in pools)
    return composed.world_size


# Presets whose run on the stack another test makes already: the PyTorch/XLA preset's path (a
# tpu_xla job on a v5e 2x2 slice, the XLA environment, four CPU PJRT devices) is
# tests/integration/test_tpu_jobs.py's, its FSDP mesh and sharded checkpoints
# tests/trainers/xla/'s, its scaled-down arguments the trainer's (test_preset_shapes.py). A
# second stack run of it costs a minute of the suite and shows nothing new. So does the JAX
# preset on the same slice: test_tpu_jobs runs a tpu_jax job on a v5e 2x2 slice with the
# built-in trainer, and the survival stack's tests run spot jobs (the 4x4 preset, one JAX
# process on each of four VMs joined in one mesh, runs here).
RUN_ELSEWHERE = {"tpu-v5e-2x2-xla-fsdp-spot", "tpu-v5e-2x2-jax-spot"}
RUNNABLE = [p for p in presets.PRESETS if not p.needs and p.slug not in RUN_ELSEWHERE
            and local_processes(p) <= LOCAL_PROCESSES]


def fits_this_machine(request: dict[str, Any]) -> bool:
    """What the control plane checks before the local emulator runs a job (local_machine.py)."""
    return local_machine.overflow(composer.compose(composer.JobRequest.from_dict(request))) is None


def local_request(preset: presets.Preset) -> dict[str, Any]:
    """What the stack runs of a preset: the preset with the tiny GPT for a few steps, or, when
    its model does not fit this machine (the Llama-3-8B layout, the 1.2B GPT on a v5e slice),
    its scaled-down variant: the same strategy, degrees and architecture at a CPU size."""
    if fits_this_machine(preset.request):
        return {**preset.job_request(), "args": SMALL_STEPS}
    return preset.scaled_down()


def test_the_runnable_presets_are_those_with_the_built_in_trainer() -> None:
    assert {p.slug for p in RUNNABLE} >= {"single-node-fsdp-a100", "cheap-l4-ddp-spot",
                                          "smallest-multi-gpu-t4", "cpu-ddp-demo",
                                          "tpu-v5e-4x4-jax"}
    assert all("command" not in p.request for p in RUNNABLE)


@pytest.mark.parametrize("preset", RUNNABLE, ids=lambda p: p.slug)
def test_a_preset_trains_on_the_local_stack_and_succeeds(
        stack: Stack, api: Api, seeded: dict[str, Any], preset: presets.Preset) -> None:
    request = {**local_request(preset), "name": f"preset-{preset.slug}"[:60]}
    response = api.post("/api/v1/jobs/", request)
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=540,
                       what=f"preset {preset.slug} to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    # A composition the trainer cannot run crashes at every start and never succeeds; one
    # restart of a job that then succeeded is the machine's (a rendezvous that timed out while
    # two cores were saturated), not the composition's.
    assert job["restarts"] <= 1, (
        "it trained as composed, without crash-looping: "
        + why_it_restarted(api, job_id) + f"\n--- emulator ---\n{stack.log_tail('emulator')}")
    # The follower may store a job's lines a moment after its state turns terminal.
    deadline = time.monotonic() + 60
    while True:
        events = api.get(f"/api/v1/jobs/{job_id}/events/", limit=1000)["results"]
        started = [e for e in events if e["kind"] == "run_started"]
        if started or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert started, [e["kind"] for e in events]
    world = composer.compose(composer.JobRequest.from_dict(request)).world_size
    if request.get("strategy") in parallelism.TPU_STRATEGIES:
        # A process per TPU VM, one mesh spanning every chip of the slice: at every start (one
        # restart is allowed above).
        for dims in [e["data"]["dims"] for e in started]:
            assert math.prod(dims.values()) == world, dims
    else:
        assert {e["data"].get("world_size") for e in started} == {world}


def test_a_preset_bigger_than_this_machine_is_refused_with_the_figures(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    preset = presets.get("llama3-8b-tp2-fsdp4-a100")
    assert not fits_this_machine(preset.request) and fits_this_machine(preset.scaled_down())
    response = api.post("/api/v1/jobs/", {**preset.job_request(), "name": "llama3-8b-full"})
    assert response.status_code == 400, response.text
    [message] = response.json()["model"]["parameters"]
    assert "GiB (8 processes x " in message and "the machine has " in message, message
    assert "--scale-down" in message
    # Refused before anything was created or started: the stack's processes all still run.
    assert not stack.dead()


def test_a_preset_whose_model_only_its_arguments_name_fails_in_the_emulator_with_the_figures(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    """The 8B preset without its model section (as an imported CustomJob has none): the
    composer has no memory plan to refuse it with, so it reaches the emulator, whose guard
    (localvertex/jobs/machine_fit.py) fails it before any replica starts, naming the figures;
    the failure is the job's, not a stockout to retry, and the stack goes on."""
    request = {k: v for k, v in presets.get("llama3-8b-tp2-fsdp4-a100").job_request().items()
               if k != "model"}
    response = api.post("/api/v1/jobs/", {**request, "name": "llama3-8b-args-only"})
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=120,
                       what="the 8B job to end", stack=stack)
    assert job["state"] == "FAILED", job
    for figure in ("GB in all", "workerpool0: 1 replica x ", "8 processes x ",
                   "the machine has ", "No replica was started",
                   "--model-config llama-3-8b-scaled"):
        assert figure in job["error_message"], (figure, job["error_message"])
    [attempt] = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    assert attempt["failure"] == "config" and not attempt["started_at"], attempt
    assert job["diagnosis"] and "llama-3-8b-scaled" in json.dumps(job["diagnosis"])
    assert not stack.dead()


def why_it_restarted(api: Api, job_id: int) -> str:
    """What a restart assertion shows: the job's restart records and its warning and error
    lines (the emulator's "Restarting ..." lines carry the exit code, the trainer's its
    traceback)."""
    restarts = api.get(f"/api/v1/jobs/{job_id}/restarts/")
    lines = api.get(f"/api/v1/jobs/{job_id}/logs/", severity="WARNING", limit=200)["results"]
    return "\n".join([json.dumps(restarts)[:3000], *(
        f"{line['timestamp']} {line['replica']}: {line['message']}"[:800] for line in lines)])


PACKAGE_TASK = """
import runpy, sys
# The package's module hands over to the built-in trainer with its own arguments.
sys.argv = ["trainers.train", *sys.argv[1:]]
runpy.run_module("trainers.train", run_name="__main__", alter_sys=True)
"""


def _sdist(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in {"pkgtrain-0.1/setup.py": "from setuptools import setup\nsetup()\n",
                           "pkgtrain-0.1/pkgtrain/__init__.py": "",
                           "pkgtrain-0.1/pkgtrain/task.py": PACKAGE_TASK}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_a_python_package_job_runs_its_module_on_the_local_stack(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    _sdist(stack.emulator_data_dir / "gcs" / "cp-pkgs" / "pkgtrain-0.1.tar.gz")
    request = {"name": "python-package", "chief": {"machine_type": "n1-standard-4"},
               "python_package": {
                   "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/"
                                         "pytorch-xla.2-4.py310:latest",
                   "package_uris": ["gs://cp-pkgs/pkgtrain-0.1.tar.gz"],
                   "python_module": "pkgtrain.task"},
               "args": SMALL_STEPS}
    response = api.post("/api/v1/jobs/", request)
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the python package job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    steps = api.steps_through(job_id, 4)
    assert [s["step"] for s in steps] == [1, 2, 3, 4]
