"""TPU jobs composed through the REST API on the local stack: a v5e 2x2 tpu_jax job runs the
built-in JAX trainer (the emulator plays the slice's four chips as four CPU devices) to
SUCCEEDED, with its steps and checkpoints on the API and its page; so does a v5e 2x2 tpu_xla
job, which the emulator runs in the PyTorch/XLA environment (.venv/xla, built here when
missing) on four CPU PJRT devices."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from config.devstack import Stack
from tests.conftest import require
from tests.integration.test_end_to_end import browser_session, emulator_jobs
from tests.stacks import Api
from tests.xla_env import ensure_xla_env
from vertexplan import composer

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
V5E_2X2 = {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"}
STEPS, EVERY = 20, 5


def tpu_job(name: str, strategy: str) -> dict[str, Any]:
    return {"name": name, "strategy": strategy, "chief": dict(V5E_2X2),
            "args": ["--preset", "tiny", "--steps", str(STEPS), "--checkpoint-every",
                     str(EVERY), "--eval-every", "0"]}


def test_a_v5e_2x2_jax_job_trains_with_the_built_in_trainer_and_succeeds(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    missing = [m for m in ("jax", "flax", "optax", "orbax.checkpoint")
               if importlib.util.find_spec(m) is None]
    require(not missing, f"the jax extra is not installed (missing {', '.join(missing)})")
    # On spot, as the tpu-v5e-2x2-jax-spot preset runs (test_presets_run leaves it to this test).
    response = api.post("/api/v1/jobs/", {**tpu_job("tpu-jax-v5e", "tpu_jax"),
                                          "scheduling_strategy": "SPOT"})
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the TPU JAX job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    assert job["restarts"] == 0

    # What Vertex was asked to run: the JAX entrypoint in the JAX TPU image, over four chips.
    pool = submitted_pool(stack, job_id)
    assert (pool.machine_spec.machine_type, pool.machine_spec.tpu_topology) == (
        "ct5lp-hightpu-4t", "2x2")
    assert submitted_job(stack, job_id).job_spec.scheduling.strategy.name == "SPOT"
    assert list(pool.container_spec.command) == ["python", "-m", "trainers.jax"]
    assert list(pool.container_spec.args[:2]) == ["--mesh", "4,1,1"]
    assert pool.container_spec.image_uri == composer.DEFAULT_TPU_IMAGES["tpu_jax"]

    steps = api.steps_through(job_id, STEPS)
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    events = api.events_through(job_id)
    [started] = [e for e in events if e["kind"] == "run_started"]
    assert started["data"]["dims"] == {"data": 4, "fsdp": 1, "tensor": 1}
    saved = [e["step"] for e in events if e["kind"] == "checkpoint_saved"]
    assert saved == list(range(EVERY, STEPS + 1, EVERY))
    # The trainer keeps the last three; the API lists those that still exist, newest first.
    kept = api.get(f"/api/v1/jobs/{job_id}/")["checkpoints"]
    assert [c["step"] for c in kept] == [20, 15, 10]
    assert all("/checkpoints/step-" in c["path"] for c in kept)

    assert_on_its_page(stack, seeded, job_id, "tpu-jax-v5e", kept[0]["path"])


@pytest.mark.environment
def test_a_v5e_2x2_pytorch_xla_job_trains_with_the_built_in_trainer_and_succeeds(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    ensure_xla_env()
    response = api.post("/api/v1/jobs/", tpu_job("tpu-xla-v5e", "tpu_xla"))
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=600,
                       what="the PyTorch/XLA job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]

    # What Vertex was asked to run: the PyTorch/XLA entrypoint on the TPU, over four chips.
    pool = submitted_pool(stack, job_id)
    assert list(pool.container_spec.command) == ["python", "-m", "trainers.xla"]
    assert {e.name: e.value for e in pool.container_spec.env}.get("PJRT_DEVICE") == "TPU"
    assert pool.container_spec.image_uri == composer.DEFAULT_TPU_IMAGES["tpu_xla"]

    steps = api.steps_through(job_id, STEPS)
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    events = api.events_through(job_id)
    started = [e for e in events if e["kind"] == "run_started"]
    assert started and all(e["data"]["dims"] == {"data": 4, "fsdp": 1} for e in started)
    saved = {e["step"] for e in events if e["kind"] == "checkpoint_saved"}
    assert saved >= set(range(EVERY, STEPS + 1, EVERY))
    kept = api.get(f"/api/v1/jobs/{job_id}/")["checkpoints"]
    assert kept and kept[0]["step"] == STEPS
    assert all("/checkpoints/step-" in c["path"] for c in kept)

    assert_on_its_page(stack, seeded, job_id, "tpu-xla-v5e", kept[0]["path"])


def submitted_job(stack: Stack, job_id: int) -> Any:
    """The CustomJob the control plane sent the emulator for the job."""
    [submitted] = [j for j in emulator_jobs(stack) if j.labels.get("cp-job") == str(job_id)]
    return submitted


def submitted_pool(stack: Stack, job_id: int) -> Any:
    """The first worker pool of the CustomJob the control plane sent the emulator for the job."""
    return submitted_job(stack, job_id).job_spec.worker_pool_specs[0]


def assert_on_its_page(stack: Stack, seeded: dict[str, Any], job_id: int, name: str,
                       newest_checkpoint: str) -> None:
    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/jobs/{job_id}/", timeout=10)
    assert page.status_code == 200
    assert name in page.text and "SUCCEEDED" in page.text
    assert newest_checkpoint in page.text, "the newest checkpoint is on the job's page"
