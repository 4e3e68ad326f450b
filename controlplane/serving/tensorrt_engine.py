"""The tensorrt runtime's GPU: the machine its engine is built on, and the deployments it may
serve on.

A TensorRT engine is compiled for one GPU family (its kernels are chosen and tuned on the
device that builds it) and loads only on that family. So the packaging job builds it on the
accelerator the model will be served with, the entry records which, and a deployment on
another accelerator is refused before Vertex would start replicas that cannot load the model.

g2-standard-8 with one NVIDIA_L4 is the cheapest catalogue combination with TensorRT support
(VERTEX_FACTS.md section 3: g2-standard-4/8/12/16/32 take one L4); the 8-vCPU shape rather than
the 4 leaves memory for the ONNX export and the builder beside the weights. The packaging job
is checked against the catalogue (vertexplan.catalog.validate_custom_job) before it is sent.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from controlplane.serving.models import ModelEntry
from vertexplan.catalog import validate_custom_job

MACHINE_TYPE = "g2-standard-8"
ACCELERATOR_TYPE = "NVIDIA_L4"
ACCELERATOR_COUNT = 1
ENGINE_ARGS = ["--engine", "tensorrt"]  # triton_package's; fp16 is its default precision


class EngineJobInvalid(ValueError):
    """The catalogue refuses the packaging job's machine; the message names the field."""


def machine_spec() -> dict[str, Any]:
    return {"machineType": MACHINE_TYPE, "acceleratorType": ACCELERATOR_TYPE,
            "acceleratorCount": ACCELERATOR_COUNT}


def check_job(custom_job: dict[str, Any]) -> None:
    """The catalogue's rules on the packaging job, in the product's region."""
    problems = validate_custom_job(custom_job, settings.VERTEX_REGION)
    if problems:
        raise EngineJobInvalid("; ".join(f"{p.path}: {p.message}" for p in problems))


def deploy_refusal(entry: ModelEntry, accelerator_type: str) -> str:
    """Why ``entry`` cannot be deployed with ``accelerator_type`` (the deploy request's
    accelerator_type field), or "" when it can. Only tensorrt entries are bound to one."""
    if entry.runtime != ModelEntry.Runtime.TENSORRT:
        return ""
    built_for = entry.engine_accelerator or ACCELERATOR_TYPE
    if accelerator_type == built_for:
        return ""
    asked = accelerator_type or "no accelerator"
    return (f"model {entry.display_name} is a TensorRT engine built on {built_for}: it loads "
            f"only on that GPU, not on {asked}; deploy it with accelerator_type {built_for} "
            "(on a machine type that takes it)")
