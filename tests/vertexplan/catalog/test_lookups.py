"""Helpers the composer, memory planner and forms use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vertexplan.catalog import (
    UnknownRegionError,
    accelerator_type_choices,
    allowed_accelerator_counts,
    boot_disk_type_choices,
    describe_machine_spec,
    device_memory_gb,
    devices_per_replica,
    is_reduction_server_image,
    is_tpu,
    is_tpu_pod,
    list_machine_types,
    machine_type_choices,
    reduction_server_image,
    region_choices,
    resolve_path,
    strategy_choices,
    tpu_topology_choices,
    vms_per_replica,
)
from vertexplan.catalog.errors import child, entry, item, parent_path, split_path


def names(machines: list) -> list[str]:
    return [m.name for m in machines]


def test_list_machine_types_by_accelerator() -> None:
    assert names(list_machine_types("NVIDIA_TESLA_A100")) == [
        "a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g",
    ]  # fmt: skip
    assert names(list_machine_types("TPU_V5_LITEPOD")) == [
        "ct5lp-hightpu-1t", "ct5lp-hightpu-4t", "ct5lp-hightpu-8t",
    ]  # fmt: skip
    assert "cloud-tpu" in names(list_machine_types(kind="tpu"))
    assert all(m.kind == "cpu" for m in list_machine_types(kind="cpu"))
    assert "n1-standard-96" not in names(list_machine_types("NVIDIA_TESLA_P100"))


def test_allowed_counts() -> None:
    assert allowed_accelerator_counts("n1-standard-16", "NVIDIA_TESLA_V100") == (2, 4, 8)
    assert allowed_accelerator_counts("n1-standard-16") == (1, 2, 4, 8)
    assert allowed_accelerator_counts("g2-standard-48") == (4,)
    assert allowed_accelerator_counts("e2-standard-4") == ()


@pytest.mark.parametrize(
    ("spec", "devices", "memory", "vms"),
    [
        ({"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
          "acceleratorCount": 8}, 8, 40, 1),
        ({"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
          "acceleratorCount": "2"}, 2, 16, 1),
        ({"machineType": "a3-ultragpu-8g", "acceleratorType": 15, "acceleratorCount": 8},
         8, 141, 1),
        ({"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"}, 4, 16, 4),
        ({"machineType": "ct5lp-hightpu-1t"}, 1, 16, 1),
        ({"machineType": "ct6e-standard-8t", "tpuTopology": "2x4"}, 8, 32, 1),
        ({"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8},
         8, 16, 1),
        ({"machineType": "n1-highcpu-16"}, 0, None, 1),
    ],
)  # fmt: skip
def test_machine_spec_shape(spec: dict, devices: int, memory: float | None, vms: int) -> None:
    assert devices_per_replica(spec) == devices
    assert device_memory_gb(spec) == memory
    assert vms_per_replica(spec) == vms
    assert describe_machine_spec(spec).devices == devices * vms


@pytest.mark.parametrize(
    "spec",
    [
        {"machineType": "z1-huge"},
        {"machineType": "ct5lp-hightpu-4t"},
        {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "3x3"},
        {"machineType": "n1-standard-8", "acceleratorType": "A100", "acceleratorCount": 1},
        {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
         "acceleratorCount": "two"},
    ],
)  # fmt: skip
def test_machine_spec_shape_refuses_what_it_cannot_read(spec: dict) -> None:
    with pytest.raises(ValueError):
        describe_machine_spec(spec)


def test_tpu_predicates() -> None:
    assert is_tpu("ct5lp-hightpu-4t") and is_tpu("cloud-tpu")
    assert not is_tpu("a2-highgpu-1g") and not is_tpu("nonsense")
    assert is_tpu_pod("ct5lp-hightpu-4t", "4x4")
    assert not is_tpu_pod("ct5lp-hightpu-4t", "2x2")
    assert not is_tpu_pod("ct5lp-hightpu-1t", None)


@pytest.mark.parametrize(
    ("region", "prefix"),
    [("us-central1", "us"), ("europe-west4", "europe"), ("asia-southeast1", "asia")],
)
def test_reduction_server_image(region: str, prefix: str) -> None:
    image = reduction_server_image(region)
    assert image == f"{prefix}-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
    assert is_reduction_server_image(image)


def test_unknown_region() -> None:
    with pytest.raises(UnknownRegionError) as caught:
        reduction_server_image("europe-west-4")
    assert caught.value.suggestions[0] == "europe-west4"


def test_form_choices() -> None:
    groups = dict(machine_type_choices())
    a2 = dict(groups["A2: NVIDIA A100"])
    assert a2["a2-highgpu-4g"] == "a2-highgpu-4g: 48 vCPU, 340 GB, 4 x NVIDIA_TESLA_A100 (40 GB)"
    assert [label for label, _ in machine_type_choices("NVIDIA_L4")] == ["G2: NVIDIA L4"]
    accelerators = [value for value, _ in accelerator_type_choices()]
    assert "NVIDIA_TESLA_T4" in accelerators and "TPU_V5_LITEPOD" in accelerators
    assert "NVIDIA_TESLA_K80" not in accelerators  # deprecated, and no machine takes it
    assert "NVIDIA_GB200" not in accelerators  # no training combination known
    assert all(v.startswith("TPU") for v, _ in accelerator_type_choices("tpu"))
    assert [v for v, _ in boot_disk_type_choices()] == [
        "pd-ssd",
        "pd-standard",
        "hyperdisk-balanced",
    ]
    assert ("us-central1", "us-central1 (Iowa)") in region_choices()
    assert [v for v, _ in strategy_choices()] == ["STANDARD", "SPOT", "FLEX_START"]
    topologies = dict(tpu_topology_choices("ct5lp-hightpu-4t"))
    assert "no spot" in topologies["4x4"] and "no spot" not in topologies["2x2"]


def test_paths_round_trip() -> None:
    doc = {"labels": {"a.b": "x"}, "jobSpec": {"workerPoolSpecs": [{}, {"replicaCount": 0}]}}
    p = item("jobSpec.workerPoolSpecs", 1)
    assert resolve_path(doc, child(p, "replicaCount")) == (True, 0)
    assert resolve_path(doc, entry("labels", "a.b")) == (True, "x")
    assert resolve_path(doc, "jobSpec.workerPoolSpecs[2]") == (False, None)
    assert split_path('labels["a.b"]') == ["labels", "a.b"]
    assert parent_path("jobSpec.workerPoolSpecs[1].replicaCount") == "jobSpec.workerPoolSpecs[1]"
    with pytest.raises(ValueError):
        split_path("jobSpec..x")


def test_the_package_imports_nothing_heavy() -> None:
    """Forms, the REST API and workers import it: no Django, Google client or torch."""
    code = (
        "import sys; before = set(sys.modules); "
        "import vertexplan.catalog as c; c.validate_custom_job({}); "
        "print(sorted(m for m in set(sys.modules) - before "
        "if m.split('.')[0] in ('django', 'google', 'grpc', 'proto', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
