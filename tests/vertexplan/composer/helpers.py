"""Job requests the composer tests share."""

from __future__ import annotations

import json
from typing import Any

from vertexplan import composer

A100_8 = {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
          "accelerator_count": 8}
T4_2 = {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
        "accelerator_count": 2}
CPU = {"machine_type": "n1-standard-4"}
IMAGE = "us-docker.pkg.dev/my-project/training/trainer:1"


def job(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "exp", "chief": dict(CPU)}
    base.update(fields)
    return base


def pools(custom_job: dict[str, Any]) -> list[dict[str, Any]]:
    return custom_job["jobSpec"]["workerPoolSpecs"]


def env_of(pool: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in pool["containerSpec"].get("env", [])}


def deepspeed_json(custom_job: dict[str, Any]) -> dict[str, Any]:
    return json.loads(env_of(pools(custom_job)[0])["CP_DEEPSPEED_CONFIG_JSON"])


def messages(errors: dict[str, list[str]]) -> str:
    return " | ".join(m for ms in errors.values() for m in ms)


def compose_request(request: dict[str, Any], **options: Any) -> composer.Composition:
    """The composition of a request written as a dict (as the API's JSON or a stored job)."""
    return composer.compose(composer.JobRequest.from_dict(request), **options)
