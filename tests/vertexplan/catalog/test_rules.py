"""Specific validation cases: the messages people will read."""

from __future__ import annotations

import copy

import pytest

from tests.vertexplan.catalog.factories import (
    IMAGE,
    REDUCTION_SERVER,
    job,
    machine_spec,
    multinode_a100,
    only_error,
    paths,
    pool,
    single,
)
from vertexplan.catalog import UnknownRegionError, validate_custom_job

POOL0 = "jobSpec.workerPoolSpecs[0]"
SPEC0 = f"{POOL0}.machineSpec"


# -- PRESETS.md: the shipped presets are valid ----------------------------------------------------


def test_multinode_preset_is_valid() -> None:
    preset = multinode_a100(strategy="SPOT", restartJobOnWorkerRestart=True, timeout="172800s")
    preset["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskSizeGb"] = 200
    preset["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"] = [
        {"name": "NCCL_DEBUG", "value": "INFO"}
    ]
    preset["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "gs://my-bucket/runs/42"}
    assert validate_custom_job(preset, region="us-central1") == []


@pytest.mark.parametrize(
    "spec",
    [
        single("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8, strategy="STANDARD"),
        single("g2-standard-8", "NVIDIA_L4", 1, strategy="SPOT"),
        single("n1-standard-8", "NVIDIA_TESLA_T4", 2),
        single("ct5lp-hightpu-4t", topology="2x2", strategy="SPOT"),
        single("ct5lp-hightpu-4t", topology="4x4"),
    ],
)
def test_single_node_and_tpu_presets_are_valid(spec: dict) -> None:
    assert validate_custom_job(spec) == []


# -- machines and accelerators --------------------------------------------------------------------


def test_a100_on_n1_standard_4_names_what_it_takes() -> None:
    error = only_error(validate_custom_job(single("n1-standard-4", "NVIDIA_TESLA_A100", 1)))
    assert error.path == f"{SPEC0}.acceleratorType"
    for gpu in ("NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100"):
        assert gpu in error.message
    assert error.suggestions[0] == "a2-highgpu-1g"


def test_three_gpus_on_a2_highgpu_4g() -> None:
    error = only_error(validate_custom_job(single("a2-highgpu-4g", "NVIDIA_TESLA_A100", 3)))
    assert error.path == f"{SPEC0}.acceleratorCount"
    assert "a2-highgpu-4g takes 4 NVIDIA_TESLA_A100, not 3" in error.message
    assert error.suggestions == ("4",)


def test_two_gpus_on_a2_highgpu_4g_suggests_the_2g() -> None:
    error = only_error(validate_custom_job(single("a2-highgpu-4g", "NVIDIA_TESLA_A100", 2)))
    assert "did you mean a2-highgpu-2g?" in error.message
    assert error.suggestions == ("a2-highgpu-2g",)


def test_sixteen_a100s_suggest_the_mega_machine() -> None:
    error = only_error(validate_custom_job(single("a2-highgpu-8g", "NVIDIA_TESLA_A100", 16)))
    assert error.suggestions == ("a2-megagpu-16g",)


def test_n1_count_suggests_the_nearest_machine_of_its_series() -> None:
    error = only_error(validate_custom_job(single("n1-standard-32", "NVIDIA_TESLA_T4", 1)))
    assert error.suggestions == ("n1-standard-16",)


def test_unknown_machine_type_did_you_mean() -> None:
    error = only_error(validate_custom_job(single("a2-highgpu-3g", "NVIDIA_TESLA_A100", 3)))
    assert error.path == f"{SPEC0}.machineType"
    assert "a2-highgpu-1g" in error.suggestions or "a2-highgpu-2g" in error.suggestions
    assert "did you mean" in error.message


def test_unknown_accelerator_did_you_mean() -> None:
    error = only_error(validate_custom_job(single("a2-highgpu-1g", "A100", 1)))
    assert error.path == f"{SPEC0}.acceleratorType"
    assert "NVIDIA_TESLA_A100" in error.suggestions


def test_a_name_missing_its_middle_part_suggests_it_first() -> None:
    # NVIDIA_A100 is neither NVIDIA_TESLA_A100 nor a substring of it; it holds every part of it.
    error = only_error(validate_custom_job(single("a2-highgpu-1g", "NVIDIA_A100", 1)))
    assert error.path == f"{SPEC0}.acceleratorType"
    assert error.suggestions[:2] == ("NVIDIA_TESLA_A100", "NVIDIA_A100_80GB")
    assert "did you mean NVIDIA_TESLA_A100" in error.message


def test_enum_numbers_are_accepted() -> None:
    assert validate_custom_job(single("n1-standard-8", 5, 2)) == []  # 5 = NVIDIA_TESLA_T4
    assert validate_custom_job(single("n1-standard-8", strategy=4)) == []  # 4 = SPOT


def test_count_without_type() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", count=2)))
    assert error.path == f"{SPEC0}.acceleratorCount"
    assert "without acceleratorType" in error.message


def test_type_without_count() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", "NVIDIA_TESLA_T4")))
    assert error.path == f"{SPEC0}.acceleratorCount"
    assert error.suggestions == ("1", "2", "4")


def test_cpu_machine_takes_no_gpu() -> None:
    error = only_error(validate_custom_job(single("e2-standard-8", "NVIDIA_TESLA_T4", 1)))
    assert error.path == f"{SPEC0}.acceleratorType"
    assert "takes no accelerators" in error.message
    assert error.suggestions


def test_accelerator_type_unspecified_means_none() -> None:
    assert validate_custom_job(single("n1-standard-8", "ACCELERATOR_TYPE_UNSPECIFIED")) == []


def test_v6e_takes_no_accelerator_type() -> None:
    error = only_error(
        validate_custom_job(single("ct6e-standard-4t", "TPU_V5_LITEPOD", topology="2x2"))
    )
    assert "leave acceleratorType out" in error.message


def test_v5e_accepts_its_own_accelerator_type() -> None:
    assert validate_custom_job(single("ct5lp-hightpu-4t", "TPU_V5_LITEPOD", 4, "2x2")) == []


# -- replicas and pools ---------------------------------------------------------------------------


@pytest.mark.parametrize("replicas", [0, "0", -1])
def test_zero_replicas_in_a_worker_pool(replicas: int | str) -> None:
    gpu = machine_spec("n1-standard-8", "NVIDIA_TESLA_T4", 1)
    error = only_error(validate_custom_job(job(pool(gpu), pool(gpu, replicas))))
    assert error.path == "jobSpec.workerPoolSpecs[1].replicaCount"
    assert "at least 1" in error.message and "{}" in error.message


def test_chief_runs_exactly_one_replica() -> None:
    spec = job(pool(machine_spec("n1-standard-8"), 2))
    error = only_error(validate_custom_job(spec))
    assert error.path == f"{POOL0}.replicaCount"
    assert "exactly 1" in error.message and "workerPoolSpecs[1]" in error.message
    error = only_error(validate_custom_job(job(pool(machine_spec("n1-standard-8"), 0))))
    assert "exactly 1" in error.message


def test_missing_replica_count() -> None:
    spec = single("n1-standard-8")
    del spec["jobSpec"]["workerPoolSpecs"][0]["replicaCount"]
    error = only_error(validate_custom_job(spec))
    assert error.path == f"{POOL0}.replicaCount"


def test_replica_count_must_be_whole() -> None:
    error = only_error(validate_custom_job(job(pool(machine_spec("n1-standard-8"), "one"))))
    assert error.path == f"{POOL0}.replicaCount"


def test_empty_placeholder_pools_are_allowed_after_the_first() -> None:
    gpu = machine_spec("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8)
    spec = job(pool(gpu), {}, pool(machine_spec("n1-highcpu-16"), 2, REDUCTION_SERVER))
    assert validate_custom_job(spec) == []
    error = only_error(validate_custom_job(job({}, pool(gpu))))
    assert error.path == POOL0


def test_at_most_four_pools() -> None:
    cpu = pool(machine_spec("n1-standard-8"))
    error = only_error(validate_custom_job(job(cpu, cpu, cpu, cpu, cpu)))
    assert error.path == "jobSpec.workerPoolSpecs[4]"


def test_missing_job_spec_and_pools() -> None:
    assert paths(validate_custom_job({"displayName": "x"})) == ["jobSpec"]
    assert paths(validate_custom_job({"displayName": "x", "jobSpec": {}})) == [
        "jobSpec.workerPoolSpecs"
    ]
    assert paths(validate_custom_job({"displayName": "x", "jobSpec": {"workerPoolSpecs": []}})) == [
        "jobSpec.workerPoolSpecs"
    ]


def test_not_an_object() -> None:
    assert paths(validate_custom_job([])) == [""]  # type: ignore[arg-type]


# -- TPU ------------------------------------------------------------------------------------------


def test_tpu_with_two_pools() -> None:
    tpu = pool(machine_spec("ct5lp-hightpu-4t", topology="2x2"))
    errors = validate_custom_job(job(tpu, pool(machine_spec("n1-standard-8"))))
    error = only_error(errors)
    assert error.path == "jobSpec.workerPoolSpecs[1]"
    assert "exactly one worker pool" in error.message


def test_tpu_in_a_second_pool() -> None:
    spec = job(pool(machine_spec("n1-standard-8")), pool(machine_spec("cloud-tpu", "TPU_V3", 8)))
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.workerPoolSpecs[1].machineSpec.machineType"


def test_spot_on_a_v5e_pod_is_refused_but_allowed_on_one_host() -> None:
    error = only_error(
        validate_custom_job(single("ct5lp-hightpu-4t", topology="4x4", strategy="SPOT"))
    )
    assert error.path == "jobSpec.scheduling.strategy"
    assert "4 VMs" in error.message and "2x2" in error.message
    assert validate_custom_job(single("ct5lp-hightpu-4t", topology="2x2", strategy="SPOT")) == []


def test_tpu_topology_required_when_the_machine_has_several() -> None:
    error = only_error(validate_custom_job(single("ct5lp-hightpu-4t")))
    assert error.path == f"{SPEC0}.tpuTopology"
    assert "2x2" in error.suggestions
    assert validate_custom_job(single("ct5lp-hightpu-1t")) == []  # only 1x1 exists


def test_topology_of_another_machine_names_it() -> None:
    error = only_error(validate_custom_job(single("ct5lp-hightpu-1t", topology="2x2")))
    assert "ct5lp-hightpu-4t" in error.message


def test_topology_on_a_gpu_machine() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", topology="2x2")))
    assert error.path == f"{SPEC0}.tpuTopology"


# -- disks, tasks, env ----------------------------------------------------------------------------


def test_a_50_gb_boot_disk() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskSizeGb"] = 50
    error = only_error(validate_custom_job(spec))
    assert error.path == f"{POOL0}.diskSpec.bootDiskSizeGb"
    assert "at least 100" in error.message


def test_disk_too_large() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskSizeGb"] = 64001
    assert "at most 64000" in only_error(validate_custom_job(spec)).message


def test_pd_balanced_is_refused_with_why() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskType"] = "pd-balanced"
    error = only_error(validate_custom_job(spec))
    assert error.path == f"{POOL0}.diskSpec.bootDiskType"
    assert "pd-ssd" in error.message and "hyperdisk-balanced" in error.message
    assert error.suggestions == ("pd-ssd", "pd-standard", "hyperdisk-balanced")


def test_disk_type_typo() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskType"] = "pd_ssd"
    assert only_error(validate_custom_job(spec)).suggestions == ("pd-ssd",)


def test_a_pool_needs_a_task_and_an_image() -> None:
    spec = single("n1-standard-8")
    del spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert paths(validate_custom_job(spec)) == [f"{POOL0}.containerSpec"]
    spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"] = {"command": ["python"]}
    assert paths(validate_custom_job(spec)) == [f"{POOL0}.containerSpec.imageUri"]


@pytest.mark.parametrize("image", [
    "us-central1-docker.pkg.dev/p/r/trainer:1", "europe-docker.pkg.dev/p/r/a/b@sha256:" + "0" * 64,
    "gcr.io/p/trainer:1", "us.gcr.io/p/trainer", "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
    "ubuntu", "docker.io/library/python:3.11",
])
def test_images_vertex_pulls_are_accepted(image: str) -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"] = image
    assert validate_custom_job(spec) == []


@pytest.mark.parametrize(("image", "host", "path"), [
    ("nvcr.io/nvidia/pytorch:24.10-py3", "nvcr.io", "nvidia/pytorch:24.10-py3"),
    ("ghcr.io/org/trainer:1", "ghcr.io", "org/trainer:1"),
    ("quay.io/org/trainer", "quay.io", "org/trainer"),
    ("localhost:5000/trainer", "localhost:5000", "trainer"),
])
def test_an_image_from_a_registry_vertex_does_not_pull_is_refused(image: str, host: str,
                                                                  path: str) -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"] = image
    error = only_error(validate_custom_job(spec))
    assert error.path == f"{POOL0}.containerSpec.imageUri"
    assert f"is on {host}, which Vertex does not pull training images from" in error.message
    assert f"push it to Artifact Registry and name that copy, <region>-docker.pkg.dev/" \
           f"<project>/<repository>/{path}" in error.message


def test_python_package_spec() -> None:
    spec = single("n1-standard-8")
    pool0 = spec["jobSpec"]["workerPoolSpecs"][0]
    del pool0["containerSpec"]
    pool0["pythonPackageSpec"] = {
        "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4:latest",
        "packageUris": ["gs://my-bucket/trainer-0.1.tar.gz"],
        "pythonModule": "trainer.task",
    }
    assert validate_custom_job(spec) == []
    pool0["pythonPackageSpec"]["packageUris"] = ["/tmp/trainer.tar.gz"]
    assert paths(validate_custom_job(spec)) == [f"{POOL0}.pythonPackageSpec.packageUris[0]"]
    pool0["containerSpec"] = {"imageUri": IMAGE}
    assert f"{POOL0}.pythonPackageSpec" in paths(validate_custom_job(spec))


def _with_env(env: list) -> dict:
    spec = single("n1-standard-8")
    spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"] = env
    return spec


def test_env_names() -> None:
    env = f"{POOL0}.containerSpec.env"
    error = only_error(validate_custom_job(_with_env([{"name": "MY-VAR", "value": "1"}])))
    assert error.path == f"{env}[0].name" and error.suggestions == ("MY_VAR",)
    error = only_error(validate_custom_job(_with_env([{"name": "A"}, {"name": "A"}])))
    assert error.path == f"{env}[1].name" and "env[0]" in error.message
    error = only_error(validate_custom_job(_with_env([{"name": "N", "value": 3}])))
    assert error.path == f"{env}[0].value" and error.suggestions == ("3",)


def test_env_at_most_100() -> None:
    env = [{"name": f"V{i}", "value": "x"} for i in range(101)]
    error = only_error(validate_custom_job(_with_env(env)))
    assert error.path == f"{POOL0}.containerSpec.env"
    assert validate_custom_job(_with_env(env[:100])) == []


# -- scheduling -----------------------------------------------------------------------------------


def test_flex_start_on_t4_is_refused() -> None:
    error = only_error(
        validate_custom_job(single("n1-standard-8", "NVIDIA_TESLA_T4", 1, strategy="FLEX_START"))
    )
    assert error.path == f"{SPEC0}.acceleratorType"
    assert "FLEX_START" in error.message and "NVIDIA_TESLA_T4" in error.message


@pytest.mark.parametrize(
    ("machine", "acc", "count"),
    [
        ("g2-standard-8", "NVIDIA_L4", 1),
        ("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8),
        ("a3-highgpu-8g", "NVIDIA_H100_80GB", 8),
        ("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8),
        ("a4-highgpu-8g", "NVIDIA_B200", 8),
    ],
)
def test_flex_start_gpus(machine: str, acc: str, count: int) -> None:
    spec = single(machine, acc, count, strategy="FLEX_START", maxWaitDuration="3600s")
    assert validate_custom_job(spec) == []


def test_flex_start_limits() -> None:
    spec = single("g2-standard-8", "NVIDIA_L4", 1, strategy="FLEX_START", timeout="691200s")
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.scheduling.timeout" and "7 days" in error.message
    gpu = machine_spec("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8)
    other = machine_spec("a2-highgpu-4g", "NVIDIA_TESLA_A100", 4)
    error = only_error(validate_custom_job(job(pool(gpu), pool(other, 2), strategy="FLEX_START")))
    assert error.path == "jobSpec.workerPoolSpecs[1].machineSpec"
    assert "same machine" in error.message


def test_flex_start_on_a_cpu_machine() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", strategy="FLEX_START")))
    assert error.path == f"{SPEC0}.machineType"


@pytest.mark.parametrize("strategy", ["ON_DEMAND", "LOW_COST"])
def test_deprecated_strategies(strategy: str) -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", strategy=strategy)))
    assert error.suggestions == ("STANDARD", "SPOT")


def test_strategy_typo() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", strategy="spot")))
    assert error.suggestions == ("SPOT",)


def test_disable_retries_with_restart() -> None:
    spec = single("n1-standard-8", disableRetries=True, restartJobOnWorkerRestart=True)
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.scheduling.disableRetries"
    assert validate_custom_job(single("n1-standard-8", disableRetries=True)) == []


@pytest.mark.parametrize("timeout", ["48h", "172800", 172800, "-5s", "0s"])
def test_bad_timeouts(timeout: object) -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", timeout=timeout)))
    assert error.path == "jobSpec.scheduling.timeout"


def test_max_wait_duration_only_with_flex_start() -> None:
    error = only_error(validate_custom_job(single("n1-standard-8", maxWaitDuration="3600s")))
    assert error.path == "jobSpec.scheduling.maxWaitDuration"


# -- Reduction Server -----------------------------------------------------------------------------


def test_reduction_server_with_gpus_is_refused() -> None:
    spec = multinode_a100()
    spec["jobSpec"]["workerPoolSpecs"][2]["machineSpec"] = machine_spec(
        "n1-standard-16", "NVIDIA_TESLA_T4", 1
    )
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.workerPoolSpecs[2].machineSpec.acceleratorType"
    assert "no accelerators" in error.message


def test_reduction_server_needs_gpu_workers() -> None:
    cpu = machine_spec("n1-standard-8")
    spec = job(pool(cpu), pool(cpu, 2), pool(machine_spec("n1-highcpu-16"), 1, REDUCTION_SERVER))
    errors = validate_custom_job(spec)
    assert paths(errors) == ["jobSpec.workerPoolSpecs[2].containerSpec.imageUri"] * 2
    assert "workerPoolSpecs[0]" in errors[0].message


def test_reduction_server_only_in_pool_2() -> None:
    gpu = machine_spec("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8)
    spec = job(pool(gpu), pool(machine_spec("n1-highcpu-16"), 1, REDUCTION_SERVER))
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.workerPoolSpecs[1].containerSpec.imageUri"


# -- job fields -----------------------------------------------------------------------------------


def test_display_name() -> None:
    spec = single("n1-standard-8")
    del spec["displayName"]
    assert paths(validate_custom_job(spec)) == ["displayName"]
    spec["displayName"] = "x" * 129
    assert "at most 128" in only_error(validate_custom_job(spec)).message
    spec["displayName"] = "x" * 128
    assert validate_custom_job(spec) == []


@pytest.mark.parametrize(
    ("labels", "path"),
    [
        ({"Team": "vision"}, 'labels["Team"]'),
        ({"1team": "vision"}, 'labels["1team"]'),
        ({"team": "Vision"}, 'labels["team"]'),
        ({"team": "a" * 65}, 'labels["team"]'),
        ({"k" * 65: "v"}, f'labels["{"k" * 65}"]'),
        ({"team.name": "v"}, 'labels["team.name"]'),
        ({"team": 3}, 'labels["team"]'),
    ],
)
def test_bad_labels(labels: dict, path: str) -> None:
    spec = single("n1-standard-8")
    spec["labels"] = labels
    assert paths(validate_custom_job(spec)) == [path]


def test_good_labels() -> None:
    spec = single("n1-standard-8")
    spec["labels"] = {"cp-job": "42", "cp_team": "", "équipe": "vision"}
    assert validate_custom_job(spec) == []


def test_network_needs_a_project_number() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["network"] = "projects/my-project/global/networks/vpc"
    assert "project number" in only_error(validate_custom_job(spec)).message
    spec["jobSpec"]["network"] = "projects/123456789012/global/networks/vpc"
    spec["jobSpec"]["reservedIpRanges"] = ["vertex-range"]
    assert validate_custom_job(spec) == []
    del spec["jobSpec"]["network"]
    assert paths(validate_custom_job(spec)) == ["jobSpec.reservedIpRanges"]


def test_output_directory_must_be_gcs() -> None:
    spec = single("n1-standard-8")
    spec["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "/gcs/my-bucket/run"}
    error = only_error(validate_custom_job(spec))
    assert error.path == "jobSpec.baseOutputDirectory.outputUriPrefix"
    assert error.suggestions == ("gs://my-bucket/run",)


def test_a_field_given_in_both_spellings_and_typo_keys_are_flagged() -> None:
    spec = single("n1-standard-8", "NVIDIA_TESLA_T4", 1)
    spec["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCont"] = 2
    spec["jobSpec"]["workerPoolSpecs"][0]["replica_count"] = 1
    errors = validate_custom_job(spec)
    assert (f"{SPEC0}.acceleratorCont", ("acceleratorCount",)) in [
        (e.path, e.suggestions) for e in errors
    ]
    assert (f"{POOL0}.replica_count", ("replicaCount",)) in [
        (e.path, e.suggestions) for e in errors
    ]


def test_snake_case_alone_is_read_as_vertex_reads_it() -> None:
    spec = single("n1-standard-8", "NVIDIA_TESLA_T4", 1)
    pool = spec["jobSpec"]["workerPoolSpecs"][0]
    pool["machine_spec"] = pool.pop("machineSpec")
    pool["replica_count"] = pool.pop("replicaCount")
    assert validate_custom_job(spec) == []


def test_unknown_region_raises() -> None:
    with pytest.raises(UnknownRegionError) as caught:
        validate_custom_job(single("n1-standard-8"), region="us-central")
    assert "us-central1" in caught.value.suggestions


def test_the_job_is_not_modified() -> None:
    spec = multinode_a100(strategy="SPOT")
    before = copy.deepcopy(spec)
    validate_custom_job(spec)
    assert spec == before
