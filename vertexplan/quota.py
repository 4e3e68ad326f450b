"""Which Vertex AI training quotas a CustomJob draws on, and how much of each. Pure.

Accelerators count against `aiplatform.googleapis.com/custom_model_training_{s}` per region,
SPOT and FLEX_START against `..._preemptible_{s}` (VERTEX_FACTS.md, A3): the two are separate
quotas, so a job that does not fit on-demand may fit on spot, and the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SERVICE = "aiplatform.googleapis.com"
# AcceleratorType -> the metric's suffix. Names not listed (P4 on some docs pages, B200, v5p)
# are UNCONFIRMED: such a job is shown without a quota line rather than with a guessed one.
ACCELERATOR_METRICS = {
    "NVIDIA_TESLA_T4": "nvidia_t4_gpus",
    "NVIDIA_TESLA_V100": "nvidia_v100_gpus",
    "NVIDIA_TESLA_P100": "nvidia_p100_gpus",
    "NVIDIA_TESLA_P4": "nvidia_p4_gpus",
    "NVIDIA_L4": "nvidia_l4_gpus",
    "NVIDIA_TESLA_A100": "nvidia_a100_gpus",
    "NVIDIA_A100_80GB": "nvidia_a100_80gb_gpus",
    "NVIDIA_H100_80GB": "nvidia_h100_gpus",
    "NVIDIA_H100_MEGA_80GB": "nvidia_h100_mega_gpus",
    "NVIDIA_H200_141GB": "nvidia_h200_gpus",
    "NVIDIA_B200": "nvidia_b200_gpus",
    "TPU_V3": "tpu_v3",
    "TPU_V5_LITEPOD": "tpu_v5e",
    "TPU_V6E": "tpu_v6e",
}
PREEMPTIBLE = frozenset({"SPOT", "FLEX_START"})


def metric(accelerator: str, *, preemptible: bool) -> str | None:
    suffix = ACCELERATOR_METRICS.get(accelerator)
    if suffix is None:
        return None
    return f"{SERVICE}/custom_model_training_{'preemptible_' if preemptible else ''}{suffix}"


@dataclass(frozen=True)
class Need:
    accelerator: str
    count: int                 # accelerators the job holds at once, over every pool
    metric: str                # the quota the job's scheduling draws on
    other_metric: str          # the quota of the other kind (on-demand <-> preemptible)
    preemptible: bool


def scheduling_of(custom_job: dict[str, Any]) -> str:
    value = ((custom_job.get("jobSpec") or {}).get("scheduling") or {}).get("strategy")
    return value if value in ("SPOT", "FLEX_START") else "STANDARD"


def needs(custom_job: dict[str, Any]) -> list[Need]:
    """The job's accelerators by type, with the quota each draws on (REST JSON in)."""
    preemptible = scheduling_of(custom_job) in PREEMPTIBLE
    counts: dict[str, int] = {}
    for pool in (custom_job.get("jobSpec") or {}).get("workerPoolSpecs") or []:
        machine = (pool or {}).get("machineSpec") or {}
        accelerator = str(machine.get("acceleratorType") or "")
        try:
            count = int(machine.get("acceleratorCount") or 0) * int(pool.get("replicaCount") or 0)
        except (TypeError, ValueError):
            continue
        if accelerator and count > 0:
            counts[accelerator] = counts.get(accelerator, 0) + count
    out = []
    for accelerator, count in sorted(counts.items()):
        mine = metric(accelerator, preemptible=preemptible)
        other = metric(accelerator, preemptible=not preemptible)
        if mine and other:
            out.append(Need(accelerator, count, mine, other, preemptible))
    return out
