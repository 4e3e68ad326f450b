"""Composing every pool, strategy and option into a CustomJob, refused the way Vertex would."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.vertexplan.composer.helpers import (
    A100_8,
    CPU,
    IMAGE,
    T4_2,
    compose_request,
    deepspeed_json,
    env_of,
    job,
    messages,
    pools,
)
from vertexplan import composer, presets
from vertexplan.composer import parallelism as strategies


def test_the_multinode_preset_is_4_nodes_of_8_a100_with_zero2_and_a_reduction_server() -> None:
    preset = presets.get("vlm-finetune-4x8-a100-zero2")
    result = compose_request(preset.job_request())
    assert result.ok, result.errors
    chief, workers, reducers = pools(result.custom_job)
    assert chief["machineSpec"] == {"machineType": "a2-highgpu-8g",
                                    "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 8}
    assert chief["diskSpec"] == {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 200}
    assert (chief["replicaCount"], workers["replicaCount"]) == ("1", "3")
    assert workers["machineSpec"] == chief["machineSpec"]
    assert reducers == {
        "machineSpec": {"machineType": "n1-highcpu-16"}, "replicaCount": "2",
        "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
        "containerSpec": {
            "imageUri": "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"},
    }
    assert result.world_size == 32
    assert result.custom_job["jobSpec"]["scheduling"] == {
        "strategy": "SPOT", "restartJobOnWorkerRestart": True, "timeout": "172800s"}
    assert env_of(chief)["NCCL_DEBUG"] == "INFO"
    ds = deepspeed_json(result.custom_job)
    assert (ds["train_batch_size"], ds["train_micro_batch_size_per_gpu"],
            ds["gradient_accumulation_steps"]) == (128, 4, 1)
    # The built-in trainer: its own AdamW and schedule, bf16 (it refuses DeepSpeed's optimizer,
    # scheduler and fp16 sections), the Qwen2-VL-2B shape it ships, the user's pairs.
    assert "optimizer" not in ds and "scheduler" not in ds and "fp16" not in ds
    assert ds["bf16"] == {"enabled": True}
    container = chief["containerSpec"]
    assert container["command"] == ["python", "-m", "trainers.train"]
    args = container["args"]
    assert args[args.index("--model-config") + 1] == "qwen2-vl-2b"
    assert "--vlm-data" in args and "--tokenizer" in args
    assert ds["zero_optimization"] == {
        "stage": 2, "allgather_bucket_size": 200_000_000, "reduce_bucket_size": 200_000_000,
        "overlap_comm": True, "reduce_scatter": True, "contiguous_gradients": True}
    assert ds["gradient_clipping"] == 1.0
    assert result.deepspeed_config == ds
    # 2.35B parameters, ZeRO-2 over 32 A100s: well inside 40 GB.
    assert result.memory_plan is not None and result.memory_plan.fits
    assert result.memory_plan.data_parallel == 32


@pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.slug)
def test_every_preset_composes_valid(preset: presets.Preset) -> None:
    result = compose_request(preset.job_request())
    assert result.ok, result.errors


def test_the_reduction_server_image_is_the_regions() -> None:
    result = compose_request(job(region="europe-west4", chief=dict(A100_8),
                                  workers={"replica_count": 1},
                                  reduction_server={"replica_count": 1}))
    assert result.ok, result.errors
    image = pools(result.custom_job)[2]["containerSpec"]["imageUri"]
    assert image.startswith("europe-docker.pkg.dev/vertex-ai-restricted/")


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"chief": dict(CPU), "workers": {"replica_count": 1}, "reduction_server": {}},
     "reduction_server", "needs GPU workers"),
    ({"chief": dict(A100_8), "reduction_server": {"accelerator_type": "NVIDIA_TESLA_T4",
                                                  "accelerator_count": 1}},
     "reduction_server.accelerator_type", "no accelerators"),
    ({"chief": dict(A100_8), "reduction_server": {}, "parameter_servers": {"machine_type":
                                                                           "n1-standard-4"}},
     "parameter_servers", "either the Reduction Server or parameter servers"),
])
def test_reduction_server_rules(fields: dict[str, Any], key: str, words: str) -> None:
    result = compose_request(job(**fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_parameter_servers_and_evaluators_run_their_own_containers() -> None:
    result = compose_request(job(
        image_uri=IMAGE, chief=dict(T4_2), workers={"replica_count": 2},
        parameter_servers={"machine_type": "n1-highmem-8", "replica_count": 2},
        evaluators={"machine_type": "n1-standard-8", "replica_count": 1,
                    "args": ["--evaluate"], "env": {"ROLE": "eval"}}))
    assert result.ok, result.errors
    chief, _workers, ps, evaluators = pools(result.custom_job)
    assert ps["containerSpec"] == chief["containerSpec"]
    assert evaluators["containerSpec"]["args"] == ["--evaluate"]
    assert evaluators["containerSpec"]["env"] == [{"name": "ROLE", "value": "eval"}]
    assert result.world_size == 2 * 3  # chief and workers train; ps and evaluators do not


def test_evaluators_alone_leave_an_empty_placeholder_for_pool_two() -> None:
    result = compose_request(job(evaluators={"machine_type": "n1-standard-4"}))
    assert result.ok, result.errors
    assert [bool(p) for p in pools(result.custom_job)] == [True, False, False, True]


# -- strategies -------------------------------------------------------------------------------

def args_of(result: composer.Composition) -> list[str]:
    return pools(result.custom_job)[0]["containerSpec"]["args"]


def test_ddp_adds_only_the_strategy_and_one_process_per_gpu() -> None:
    result = compose_request(job(chief=dict(T4_2), args=["--steps", "5"]))
    assert args_of(result) == ["--strategy", "ddp", "--nproc-per-node", "2", "--steps", "5"]
    assert "env" not in pools(result.custom_job)[0]["containerSpec"]


def test_fsdp_hybrid_shard_writes_flags_and_its_config() -> None:
    result = compose_request(job(strategy="fsdp", chief=dict(A100_8),
                                  workers={"replica_count": 1}, precision="bf16",
                                  fsdp={"mode": "hybrid_shard", "shard_size": 8}, args=[]))
    assert result.ok, result.errors
    assert args_of(result) == ["--strategy", "fsdp", "--nproc-per-node", "8",
                               "--fsdp-mode", "hybrid_shard", "--set",
                               "fsdp.shard_size=8", "--set", "precision=bf16"]
    assert env_of(pools(result.custom_job)[0])[strategies.FSDP_ENV] == \
        '{"mode":"hybrid_shard","shard_size":8}'


@pytest.mark.parametrize("mode", strategies.FSDP_MODES)
def test_every_fsdp_mode_composes(mode: str) -> None:
    result = compose_request(job(strategy="fsdp", chief=dict(A100_8), fsdp={"mode": mode}))
    assert result.ok, result.errors
    assert result.fsdp_config == {"mode": mode, "shard_size": 0}


@pytest.mark.parametrize(("strategy", "offload"), [
    ("zero1", {}), ("zero2", {"offload_optimizer": True}), ("zero3", {}),
    ("zero3", {"offload_optimizer": True, "offload_params": True}),
])
def test_zero_stages_write_the_deepspeed_json_and_the_trainers_flags(
        strategy: str, offload: dict[str, bool]) -> None:
    result = compose_request(job(strategy=strategy, chief=dict(A100_8), precision="bf16",
                                  batch={"micro_batch_size": 2, "gradient_accumulation_steps": 4},
                                  deepspeed={"gradient_clipping": 0.5, **offload}, args=[]))
    assert result.ok, result.errors
    ds = deepspeed_json(result.custom_job)
    assert ds["zero_optimization"]["stage"] == int(strategy[-1])
    assert (ds["train_batch_size"], ds["bf16"]) == (2 * 4 * 8, {"enabled": True})
    assert ("offload_optimizer" in ds["zero_optimization"]) == bool(offload)
    expected = ["--strategy", strategy, "--nproc-per-node", "8", "--batch-size", "64",
                "--set", "micro_batch_size=2",
                "--set", "precision=bf16", "--set", "grad_clip=0.5"]
    expected += [a for name in ("offload_optimizer", "offload_params") if offload.get(name)
                 for a in ("--set", f"{name}=true")]
    assert args_of(result) == expected


@pytest.mark.parametrize(("batch", "key", "suggestion"), [
    ({"global_batch_size": 100, "micro_batch_size": 4, "gradient_accumulation_steps": 1},
     "batch.global_batch_size", "32"),
    ({"global_batch_size": 100, "micro_batch_size": 4}, "batch.global_batch_size", "96"),
    ({"gradient_accumulation_steps": 2}, "batch.gradient_accumulation_steps", None),
])
def test_the_batch_rule_is_checked_against_the_data_parallel_size(
        batch: dict[str, int], key: str, suggestion: str | None) -> None:
    result = compose_request(job(strategy="zero2", chief=dict(A100_8), batch=batch))
    assert key in result.errors, result.errors
    assert "data-parallel size" in result.errors[key][0]
    if suggestion:
        assert suggestion in result.suggestions[key]


def test_a_global_batch_derives_the_gradient_accumulation() -> None:
    result = compose_request(job(strategy="zero2", chief=dict(A100_8), workers={
        "replica_count": 3}, batch={"global_batch_size": 256, "micro_batch_size": 4}))
    assert result.ok, result.errors
    assert deepspeed_json(result.custom_job)["gradient_accumulation_steps"] == 2


def test_parameter_offload_needs_zero3() -> None:
    result = compose_request(job(strategy="zero2", chief=dict(A100_8),
                                  deepspeed={"offload_params": True}))
    assert "zero3" in result.errors["deepspeed.offload_params"][0]


def test_a_strategys_settings_with_another_strategy_are_refused() -> None:
    result = compose_request(job(strategy="ddp", deepspeed={"offload_optimizer": True}))
    assert "apply to strategy zero1 or zero2 or zero3" in result.errors["deepspeed"][0]


@pytest.mark.parametrize(("parallelism", "key", "words"), [
    ({"tensor": 3}, "parallelism.tensor", "does not divide the world size 16"),
    ({"tensor": 2, "pipeline": 2, "data": 3}, "parallelism.data", "set it to 4"),
    ({"tensor": 16}, "parallelism.tensor", "inside one replica (8 devices)"),
])
def test_parallel_degrees_must_multiply_to_the_world_size(parallelism: dict[str, int], key: str,
                                                          words: str) -> None:
    result = compose_request(job(strategy="zero1", image_uri=IMAGE, command=["torchrun"],
                                  chief=dict(A100_8), workers={"replica_count": 1},
                                  parallelism=parallelism))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_tensor_and_pipeline_degrees_reach_your_own_command_in_the_environment() -> None:
    result = compose_request(job(strategy="zero1", image_uri=IMAGE, command=["torchrun"],
                                  chief=dict(A100_8), workers={"replica_count": 1},
                                  parallelism={"tensor": 8, "pipeline": 2}))
    assert result.ok, result.errors
    assert env_of(pools(result.custom_job)[0])[strategies.PARALLELISM_ENV] == \
        '{"dp":1,"pp":2,"tp":8}'


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"strategy": "zero2", "precision": "fp16"}, "precision", "not fp16"),
    ({"strategy": "zero2", "deepspeed": {"optimizer": {"type": "AdamW"}}},
     "deepspeed.optimizer", "builds AdamW itself"),
    ({"strategy": "zero1", "parallelism": {"tensor": 2}}, "parallelism.tensor",
     "not zero1: DeepSpeed pairs ZeRO with them only for Megatron models"),
])
def test_the_built_in_trainers_limits_are_checked(fields: dict[str, Any], key: str,
                                                  words: str) -> None:
    result = compose_request(job(chief=dict(A100_8), **fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors
    # The same job with a command of your own is fine.
    assert compose_request(job(chief=dict(A100_8), image_uri=IMAGE, command=["run"],
                                **fields)).ok


# -- TPU ----------------------------------------------------------------------------------------

TPU = {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"}


def tpu_job(**fields: Any) -> dict[str, Any]:
    return job(**{"strategy": "tpu_jax", "image_uri": IMAGE, "command": ["python", "train.py"],
                  "chief": dict(TPU), **fields})


def test_tpu_xla_sets_the_pjrt_device_and_counts_chips() -> None:
    result = compose_request(tpu_job(strategy="tpu_xla", chief={**TPU, "tpu_topology": "4x4"}))
    assert result.ok, result.errors
    assert env_of(pools(result.custom_job)[0]) == {"PJRT_DEVICE": "TPU"}
    assert result.world_size == 16


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"strategy": "ddp"}, "strategy", "use tpu_jax (JAX) or tpu_xla (PyTorch/XLA)"),
    ({"workers": {"replica_count": 1}}, "workers", "exactly one worker pool"),
    ({"chief": {"machine_type": "ct5lp-hightpu-4t"}}, "chief.machine_type", "needs a tpuTopology"),
    ({"chief": {**TPU, "tpu_topology": "3x3"}}, "chief.tpu_topology", "2x2"),
    ({"chief": {**TPU, "tpu_topology": "4x4"}, "scheduling_strategy": "SPOT"},
     "scheduling_strategy", "not supported on TPU Pods"),
    ({"chief": {**TPU, "replica_count": 2}}, "chief.replica_count", "exactly 1 replica"),
    ({"chief": dict(A100_8)}, "strategy", "needs a TPU machine"),
])
def test_vertex_tpu_rules(fields: dict[str, Any], key: str, words: str) -> None:
    result = compose_request(tpu_job(**fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors


# -- scheduling, disks, network, identity, container --------------------------------------------

L4 = {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}


def test_flex_start_with_its_wait_and_timeout() -> None:
    result = compose_request(job(chief=dict(L4), scheduling_strategy="FLEX_START",
                                  max_wait_hours=0, timeout_hours=24, disable_retries=True))
    assert result.ok, result.errors
    assert result.custom_job["jobSpec"]["scheduling"] == {
        "strategy": "FLEX_START", "restartJobOnWorkerRestart": False, "disableRetries": True,
        "timeout": "86400s", "maxWaitDuration": "0s"}


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"chief": dict(T4_2), "scheduling_strategy": "FLEX_START"}, "chief.accelerator_type",
     "FLEX_START needs"),
    ({"chief": dict(L4), "scheduling_strategy": "FLEX_START", "timeout_hours": 200},
     "timeout_hours", "at most 7 days"),
    ({"chief": dict(L4), "scheduling_strategy": "FLEX_START", "workers": {
        "replica_count": 1, "machine_type": "g2-standard-16", "accelerator_type": "NVIDIA_L4",
        "accelerator_count": 1}}, "workers.machine_type", "same machine config"),
    ({"max_wait_hours": 1}, "max_wait_hours", "only applies to strategy FLEX_START"),
    ({"disable_retries": True, "restart_job_on_worker_restart": True}, "disable_retries",
     "cannot be true"),
    ({"spot": True, "scheduling_strategy": "FLEX_START"}, "spot", "older spelling"),
])
def test_scheduling_rules(fields: dict[str, Any], key: str, words: str) -> None:
    result = compose_request(job(**fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_spot_is_the_older_spelling_of_scheduling_strategy_spot() -> None:
    result = compose_request(job(spot=True))
    assert result.custom_job["jobSpec"]["scheduling"]["strategy"] == "SPOT"
    assert result.request.scheduling == "SPOT" and "spot" not in result.request.to_dict()


@pytest.mark.parametrize(("pool", "key", "words"), [
    ({"boot_disk_size_gb": 99}, "chief.boot_disk_size_gb", "at least 100 GB"),
    ({"boot_disk_size_gb": 64001}, "chief.boot_disk_size_gb", "at most 64000 GB"),
    ({"boot_disk_type": "pd-balanced"}, "chief.boot_disk_type", "pd-ssd, pd-standard"),
])
def test_boot_disks_in_vertexs_ranges(pool: dict[str, Any], key: str, words: str) -> None:
    result = compose_request(job(chief={**CPU, **pool}))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_each_pool_has_its_own_boot_disk() -> None:
    result = compose_request(job(chief={**CPU, "boot_disk_type": "hyperdisk-balanced",
                                         "boot_disk_size_gb": 500},
                                  workers={"replica_count": 1, "boot_disk_size_gb": 64000}))
    assert result.ok, result.errors
    assert [p["diskSpec"] for p in pools(result.custom_job)] == [
        {"bootDiskType": "hyperdisk-balanced", "bootDiskSizeGb": 500},
        {"bootDiskType": "hyperdisk-balanced", "bootDiskSizeGb": 64000}]


def test_a_persistent_disk_per_node_is_explained() -> None:
    result = compose_request(job(chief={**CPU, "persistent_disk_size_gb": 2000}))
    text = result.errors["chief.persistent_disk_size_gb"][0]
    assert "no persistent data disk" in text
    assert "base_output_directory" in text and "nfs_mounts" in text


def test_storage_network_and_identity_reach_the_job_spec() -> None:
    result = compose_request(job(
        base_output_directory="gs://my-bucket/runs/1",
        nfs_mounts=[{"server": "10.0.0.2", "path": "/share", "mount_point": "data"}],
        network="projects/123456789012/global/networks/vpc", reserved_ip_ranges=["range-a"],
        psc_network_attachment="my-attachment", enable_web_access=True,
        service_account="trainer@p.iam.gserviceaccount.com", labels={"project": "vlm"}))
    assert result.ok, result.errors
    spec = result.custom_job["jobSpec"]
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://my-bucket/runs/1"}
    assert spec["network"] == "projects/123456789012/global/networks/vpc"
    assert spec["reservedIpRanges"] == ["range-a"]
    assert spec["pscInterfaceConfig"] == {"networkAttachment": "my-attachment"}
    assert spec["enableWebAccess"] is True
    assert spec["serviceAccount"] == "trainer@p.iam.gserviceaccount.com"
    assert pools(result.custom_job)[0]["nfsMounts"] == [
        {"server": "10.0.0.2", "path": "/share", "mountPoint": "data"}]
    assert result.custom_job["labels"] == {"project": "vlm"}


@pytest.mark.parametrize(("fields", "key", "words"), [
    ({"labels": {"cp-job": "1"}}, 'labels["cp-job"]', "written by the control plane"),
    ({"labels": {"Team": "a"}}, 'labels["Team"]', "lowercase"),
    ({"network": "projects/my-proj/global/networks/vpc"}, "network", "project number"),
    ({"reserved_ip_ranges": ["r"]}, "reserved_ip_ranges", "set jobSpec.network"),
    ({"service_account": "me"}, "service_account", "service account email"),
    ({"base_output_directory": "/gcs/b/x"}, "base_output_directory", "gs://"),
    ({"nfs_mounts": [{"server": "s", "path": "share", "mount_point": "d"}]},
     "nfs_mounts[0].path", "absolute path"),
    ({"env": {"1BAD": "x"}}, "env", "not a valid variable name"),
    ({"env": {f"V{i}": "x" for i in range(101)}}, "env", "at most 100"),
    ({"image_uri": "has space"}, "image_uri", "contains spaces"),
])
def test_network_identity_and_container_rules(fields: dict[str, Any], key: str,
                                              words: str) -> None:
    result = compose_request(job(**fields))
    assert words in " ".join(result.errors.get(key, [])), result.errors


def test_the_strategys_variables_count_toward_vertexs_100() -> None:
    result = compose_request(job(strategy="zero2", chief=dict(A100_8),
                                  env={f"V{i}": "x" for i in range(100)}))
    assert "the strategy adds 1" in messages(result.errors)


def test_the_image_entrypoint_runs_without_a_command() -> None:
    result = compose_request(job(image_uri=IMAGE, image_entrypoint=True, args=["--x"]))
    assert result.ok, result.errors
    assert pools(result.custom_job)[0]["containerSpec"] == {"imageUri": IMAGE, "args": ["--x"]}


# -- memory -----------------------------------------------------------------------------------

def too_big(**fields: Any) -> dict[str, Any]:
    return job(chief=dict(A100_8), precision="bf16", model={"parameters": 7_000_000_000},
               **fields)


def test_a_job_that_does_not_fit_is_refused_with_what_would_fit() -> None:
    result = compose_request(too_big())
    [message] = result.errors["model.parameters"]
    assert "does not fit" in message and "40 GB device" in message
    assert "zero2" in result.suggestions["model.parameters"]
    assert result.memory_plan is not None and result.memory_plan.fits is False


def test_the_team_can_choose_a_warning_instead() -> None:
    result = compose_request(too_big(), memory_policy="warn")
    assert result.ok
    assert "does not fit" in result.warnings["model.parameters"][0]


def test_the_suggested_strategy_fits() -> None:
    assert compose_request(too_big(strategy="zero2")).ok


def test_without_a_model_size_there_is_no_plan() -> None:
    assert compose_request(job()).memory_plan is None


# -- attempts ---------------------------------------------------------------------------------

def test_for_attempt_keeps_the_users_labels_and_output_directory() -> None:
    base = compose_request(job(labels={"project": "vlm"},
                                base_output_directory="gs://mine/run")).custom_job
    attempt = composer.for_attempt(base, display_name="cp-7-a1", labels={"cp-job": "7"},
                                   output_uri="gs://cp/jobs/job-7")
    assert attempt["labels"] == {"project": "vlm", "cp-job": "7"}
    assert attempt["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://mine/run"}


def test_a_persistent_disk_in_a_custom_job_is_explained_at_its_path() -> None:
    from vertexplan.catalog import validate_custom_job

    custom_job = compose_request(job()).custom_job
    custom_job["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["persistentDiskSizeGb"] = 2000
    errors = {e.path: e for e in validate_custom_job(custom_job, "us-central1")}
    error = errors["jobSpec.workerPoolSpecs[0].diskSpec.persistentDiskSizeGb"]
    assert "no persistent data disk" in error.message
    assert "baseOutputDirectory" in error.suggestions


# -- tensor x pipeline x data parallel with the built-in trainer --------------------------------

H100_8 = {"machine_type": "a3-highgpu-8g", "accelerator_type": "NVIDIA_H100_80GB",
          "accelerator_count": 8}


def test_a_tp_pp_dp_job_launches_torchrun_per_replica_with_nccl_settings() -> None:
    result = compose_request(job(strategy="fsdp", chief=dict(H100_8), workers={"replica_count": 3},
                                  parallelism={"tensor": 8, "pipeline": 2,
                                               "pipeline_schedule": "1f1b"}))
    assert result.ok, result.errors
    chief, workers = pools(result.custom_job)[:2]
    for spec in (chief, workers):
        args = spec["containerSpec"]["args"]
        # The launcher flag once, right after the strategy (written twice, the trainer's
        # argparse kept the last and an exported job read back with a stray flag).
        assert args[:4] == ["--strategy", "fsdp", "--nproc-per-node", "8"]
        assert args.count("--nproc-per-node") == 1
        env = env_of(spec)
        assert json.loads(env[strategies.PARALLELISM_ENV]) == {
            "dp": 2, "tp": 8, "pp": 2, "pp_schedule": "1f1b"}
        assert env["NCCL_P2P_LEVEL"] == "NVL"
        assert env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"
    assert result.world_size == 32


@pytest.mark.parametrize(("parallelism", "key", "words"), [
    ({"tensor": 2, "pipeline_schedule": "1f1b"}, "parallelism.pipeline_schedule",
     "pipeline degree above 1"),
    ({"pipeline": 2, "pipeline_schedule": "zb"}, "parallelism.pipeline_schedule",
     "use gpipe, 1f1b, interleaved_1f1b"),
    ({"pipeline": 2, "pipeline_schedule": "interleaved_1f1b"}, "parallelism.pipeline_schedule",
     "set virtual_stages"),
    ({"pipeline": 2, "virtual_stages": 2}, "parallelism.virtual_stages", "interleaved_1f1b"),
    ({"pipeline": 2, "sequence_parallel": True}, "parallelism.sequence_parallel",
     "tensor degree above 1"),
])
def test_pipeline_options_are_checked(parallelism: dict[str, Any], key: str, words: str) -> None:
    result = compose_request(job(strategy="ddp", chief=dict(A100_8), parallelism=parallelism))
    assert words in " ".join(result.errors.get(key, [])), result.errors


@pytest.mark.parametrize(("slug", "degrees", "world", "devices"), [
    ("llama3-8b-tp2-fsdp4-a100", {"dp": 4, "tp": 2, "pp": 1}, 8, 40),
    ("llama3-70b-tp8-pp2-dp2-h100", {"dp": 2, "tp": 8, "pp": 2, "pp_schedule": "1f1b"}, 32, 80),
])
def test_the_model_parallel_presets_fit_and_launch_one_process_per_gpu(
        slug: str, degrees: dict[str, Any], world: int, devices: int) -> None:
    result = compose_request(presets.get(slug).job_request())
    assert result.ok, result.errors
    assert result.world_size == world
    chief = pools(result.custom_job)[0]
    assert json.loads(env_of(chief)[strategies.PARALLELISM_ENV]) == degrees
    args = chief["containerSpec"]["args"]
    assert args[2:4] == ["--nproc-per-node", "8"] and args.count("--nproc-per-node") == 1
    plan = result.memory_plan
    assert plan is not None and plan.fits, plan
    assert plan.device_memory_gib == devices
    assert plan.data_parallel == degrees["dp"]
