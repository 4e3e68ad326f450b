"""The built-in trainer on a TPU slice: each TPU strategy starts its own entrypoint in its own
image, JAX with a mesh over the chips of the topology, PyTorch/XLA on the PJRT TPU device."""

from __future__ import annotations

from typing import Any

import pytest

from tests.vertexplan.composer.helpers import compose_request, env_of, job, pools
from vertexplan import composer, interop, presets
from vertexplan.composer import parallelism
from vertexplan.pricing import job_estimate

V5E_2X2 = {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"}
V6E_2X4 = {"machine_type": "ct6e-standard-8t", "tpu_topology": "2x4"}
USER_ARGS = ["--preset", "tiny", "--steps", "20"]


def container(request: dict[str, Any]) -> dict[str, Any]:
    result = compose_request(request)
    assert result.ok, result.errors
    return pools(result.custom_job)[0]["containerSpec"]


def test_a_v5e_2x2_jax_job_runs_the_jax_trainer_data_parallel_over_its_four_chips() -> None:
    spec = container(job(strategy="tpu_jax", chief=dict(V5E_2X2), args=USER_ARGS))
    assert spec["command"] == ["python", "-m", "trainers.jax"]
    assert spec["args"] == ["--mesh", "4,1,1", *USER_ARGS]
    assert spec["imageUri"] == composer.DEFAULT_TPU_IMAGES["tpu_jax"]
    assert "env" not in spec  # JAX finds the TPU itself


def test_a_jax_job_without_arguments_gets_the_trainers_defaults_after_its_mesh() -> None:
    spec = container(job(strategy="tpu_jax", chief=dict(V6E_2X4)))
    assert spec["args"] == ["--mesh", "8,1,1", *parallelism.DEFAULT_TRAINER_ARGS]


@pytest.mark.parametrize(("fields", "mesh"), [
    ({"parallelism": {"tensor": 2}}, "4,1,2"),
    ({"tpu": {"sharding": "fsdp"}}, "1,8,1"),
    ({"tpu": {"sharding": "fsdp"}, "parallelism": {"tensor": 4}}, "1,2,4"),
    ({"tpu": {"sharding": "replicated"}, "parallelism": {"tensor": 8}}, "1,1,8"),
])
def test_the_jax_mesh_follows_the_jobs_parallelism(fields: dict[str, Any], mesh: str) -> None:
    spec = container(job(strategy="tpu_jax", chief=dict(V6E_2X4), **fields))
    assert spec["args"][:2] == ["--mesh", mesh]
    data, fsdp, tensor = (int(d) for d in mesh.split(","))
    assert data * fsdp * tensor == 8


def test_batch_and_precision_reach_the_jax_trainer_in_its_own_flags() -> None:
    spec = container(job(strategy="tpu_jax", chief=dict(V5E_2X2), precision="bf16",
                         batch={"global_batch_size": 32}))
    assert spec["args"][:6] == ["--mesh", "4,1,1", "--batch-size", "32", "--precision", "bf16"]
    assert "--strategy" not in spec["args"] and "--set" not in spec["args"]


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"parallelism": {"pipeline": 2}}, "parallelism.pipeline", "no pipeline stages"),
    ({"batch": {"global_batch_size": 32, "micro_batch_size": 4}},
     "batch.micro_batch_size", "does not accumulate gradients"),
    ({"batch": {"global_batch_size": 32, "gradient_accumulation_steps": 2}},
     "batch.gradient_accumulation_steps", "accumulates 2 micro batches"),
    ({"command": parallelism.TRAINER_COMMAND}, "command", "tpu_jax runs python -m trainers.jax"),
])
def test_what_the_jax_trainer_cannot_run_is_refused_by_field(fields: dict[str, Any], key: str,
                                                             words: str) -> None:
    result = compose_request(job(strategy="tpu_jax", chief=dict(V5E_2X2), **fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_a_pytorch_xla_job_runs_the_xla_trainer_on_the_pjrt_tpu_device() -> None:
    spec = container(job(strategy="tpu_xla", chief=dict(V5E_2X2), args=USER_ARGS,
                         precision="bf16"))
    assert spec["command"] == ["python", "-m", "trainers.xla"]
    assert spec["args"] == ["--mesh", "4,1", "--set", "precision=bf16", *USER_ARGS]
    assert spec["imageUri"] == composer.DEFAULT_TPU_IMAGES["tpu_xla"]
    assert env_of({"containerSpec": spec}) == {"PJRT_DEVICE": "TPU"}


def test_a_builtin_pytorch_xla_job_is_composed_without_a_warning_as_is_your_own() -> None:
    builtin = compose_request(job(strategy="tpu_xla", chief=dict(V5E_2X2)))
    assert builtin.ok and "strategy" not in builtin.warnings
    own = compose_request(job(strategy="tpu_xla", chief=dict(V5E_2X2),
                               command=["python", "train_xla.py"]))
    assert own.ok and "strategy" not in own.warnings


def test_a_pytorch_xla_job_with_fsdp_sharding_shards_over_every_chip() -> None:
    spec = container(job(strategy="tpu_xla", chief=dict(V5E_2X2), tpu={"sharding": "fsdp"}))
    assert spec["args"][:2] == ["--mesh", "1,4"]


def test_the_pytorch_xla_trainer_refuses_tensor_parallelism_by_field() -> None:
    result = compose_request(job(strategy="tpu_xla", chief=dict(V5E_2X2),
                                  parallelism={"tensor": 2}))
    assert "(data, fsdp) mesh" in " ".join(result.errors.get("parallelism.tensor", [])), \
        result.errors


def test_a_job_naming_its_own_image_keeps_it_and_gpu_jobs_keep_the_pytorch_image() -> None:
    own = "europe-docker.pkg.dev/team/training/jax:7"
    assert container(job(strategy="tpu_jax", chief=dict(V5E_2X2), image_uri=own)
                     )["imageUri"] == own
    assert container(job(strategy="ddp"))["imageUri"] == composer.DEFAULT_IMAGE


def test_the_deployments_tpu_images_are_read_at_each_compose(monkeypatch) -> None:
    chosen = {"tpu_jax": "us-docker.pkg.dev/ops/tpu/jax:2", "tpu_xla": "us-docker.pkg.dev/x:3"}
    monkeypatch.setattr(composer.DEFAULTS, "tpu_images", lambda: chosen)
    for strategy, image in chosen.items():
        assert container(job(strategy=strategy, chief=dict(V5E_2X2)))["imageUri"] == image


@pytest.mark.parametrize("fields", [
    {},
    {"tpu": {"sharding": "fsdp"}},
    {"parallelism": {"tensor": 2}, "precision": "bf16", "batch": {"global_batch_size": 32}},
])
def test_an_exported_jax_job_imports_back_as_the_same_fields(fields: dict[str, Any]) -> None:
    request = job(strategy="tpu_jax", chief=dict(V6E_2X4), **fields)
    composed = compose_request(request)
    imported = interop.to_request(composed.custom_job, region="us-central1").request
    assert "command" not in imported, "read back as the built-in trainer, not a command"
    for key, value in fields.items():
        assert imported[key] == value
    assert compose_request(imported).custom_job == composed.custom_job


def test_a_mesh_the_fields_cannot_express_is_imported_verbatim() -> None:
    request = job(strategy="tpu_jax", chief=dict(V6E_2X4), command=["python", "-m",
                  "trainers.jax"], args=["--mesh", "2,2,2", "--steps", "5"])
    composed = compose_request(request)
    assert composed.ok, composed.errors
    imported = interop.to_request(composed.custom_job, region="us-central1").request
    assert imported["args"] == ["--mesh", "2,2,2", "--steps", "5"]
    assert compose_request(imported).custom_job == composed.custom_job


@pytest.mark.parametrize(("chief", "devices", "processes"), [
    (V5E_2X2, 4, 1),  # a single-host slice: one process holding its four chips
    (V6E_2X4, 8, 1),
    ({"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x4"}, 16, 4),  # 4 VMs
])
@pytest.mark.parametrize("strategy", parallelism.TPU_STRATEGIES)
def test_a_tpu_slice_runs_one_process_per_vm_holding_its_chips_as_devices(
        chief: dict[str, Any], devices: int, processes: int, strategy: str) -> None:
    result = compose_request(job(strategy=strategy, chief=dict(chief)))
    assert result.ok, result.errors
    assert (result.world_size, result.processes) == (devices, processes)


def test_on_gpus_each_device_is_a_process() -> None:
    a100_8 = {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
              "accelerator_count": 8}
    result = compose_request(job(strategy="ddp", chief=dict(a100_8),
                                 workers={"replica_count": 1, **a100_8}))
    assert (result.world_size, result.processes) == (16, 16)


def test_the_pytorch_xla_preset_shards_a_model_that_fits_no_chip_whole_and_is_priced() -> None:
    preset = presets.get("tpu-v5e-2x2-xla-fsdp-spot")
    result = compose_request(preset.job_request())
    assert result.ok, result.errors
    spec = pools(result.custom_job)[0]["containerSpec"]
    assert spec["command"] == ["python", "-m", "trainers.xla"]
    assert spec["imageUri"] == composer.DEFAULT_TPU_IMAGES["tpu_xla"]
    assert env_of({"containerSpec": spec}) == {"PJRT_DEVICE": "TPU"}
    assert spec["args"][:6] == ["--mesh", "1,4", "--batch-size", "16", "--set",
                                "micro_batch_size=1"]
    assert result.world_size == 4 and result.expected_step is not None
    plan = result.memory_plan
    assert plan is not None and plan.fits, plan
    assert (plan.strategy, plan.shard_group, plan.device_memory_gib) == ("tpu_xla", 4, 16)
    # Replicated on every chip, the same model does not fit: FSDP is why the preset works.
    replicated = compose_request({**preset.job_request(), "tpu": {"sharding": "replicated"}})
    assert not replicated.ok and "does not fit" in " ".join(replicated.errors["model.parameters"])
    # Priced per chip-hour of the v5e slice, at the spot rate the preset asks for.
    estimate = job_estimate.hourly(result.custom_job, "us-central1")
    chips = [line for line in estimate.lines if line.resource == "tpu"]
    assert [(c.name, c.quantity) for c in chips] == [("TPU_V5_LITEPOD", 4)]
    assert estimate.strategy == "SPOT" and chips[0].hourly.spot < chips[0].hourly.on_demand
