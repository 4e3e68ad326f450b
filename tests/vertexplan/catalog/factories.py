"""Builders of CustomJob REST JSON for the catalogue tests."""

from __future__ import annotations

import copy
from typing import Any

from vertexplan.catalog import FieldError

IMAGE = "us-docker.pkg.dev/my-project/training/trainer:latest"
REDUCTION_SERVER = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"


def machine_spec(
    machine_type: str,
    accelerator_type: str | None = None,
    count: int | None = None,
    topology: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine_type}
    if accelerator_type is not None:
        spec["acceleratorType"] = accelerator_type
    if count is not None:
        spec["acceleratorCount"] = count
    if topology is not None:
        spec["tpuTopology"] = topology
    return spec


def pool(spec: dict[str, Any], replicas: int | str = "1", image: str = IMAGE) -> dict[str, Any]:
    return {
        "machineSpec": spec,
        "replicaCount": replicas,
        "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
        "containerSpec": {"imageUri": image, "command": ["python", "-m", "trainers.train"]},
    }


def job(*pools: dict[str, Any], **scheduling: Any) -> dict[str, Any]:
    """A complete minimal CustomJob with these pools (and scheduling fields, if any)."""
    spec: dict[str, Any] = {"workerPoolSpecs": list(pools)}
    if scheduling:
        spec["scheduling"] = scheduling
    return {"displayName": "cp-42-a1", "labels": {"cp-job": "42"}, "jobSpec": spec}


def single(
    machine_type: str,
    accelerator_type: str | None = None,
    count: int | None = None,
    topology: str | None = None,
    **scheduling: Any,
) -> dict[str, Any]:
    return job(pool(machine_spec(machine_type, accelerator_type, count, topology)), **scheduling)


def multinode_a100(**scheduling: Any) -> dict[str, Any]:
    """The PRESETS.md multi-node fine-tune: 4 x a2-highgpu-8g and a Reduction Server."""
    gpu = machine_spec("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8)
    return job(
        pool(gpu, "1"),
        pool(copy.deepcopy(gpu), "3"),
        pool(machine_spec("n1-highcpu-16"), "2", image=REDUCTION_SERVER),
        **scheduling,
    )


def paths(errors: list[FieldError]) -> list[str]:
    return [e.path for e in errors]


def only_error(errors: list[FieldError]) -> FieldError:
    assert len(errors) == 1, errors
    return errors[0]
