"""Which Vertex AI training quotas a CustomJob draws on, and how much of each. Pure.

Accelerators count against `aiplatform.googleapis.com/custom_model_training_{s}` per region,
SPOT and FLEX_START against `..._preemptible_{s}` (VERTEX_FACTS.md, A3): the two are separate
quotas, so a job that does not fit on-demand may fit on spot, and the other way round. The
metric table is the contract's (contract/quota_metrics.py, which says which names are
UNCONFIRMED): the emulator enforces the same names. An accelerator without a name there is
shown without a quota line rather than with a guessed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract import quota_metrics


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
    preemptible = scheduling_of(custom_job) in quota_metrics.PREEMPTIBLE
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
        mine = quota_metrics.metric(accelerator, preemptible=preemptible)
        other = quota_metrics.metric(accelerator, preemptible=not preemptible)
        if mine and other:
            out.append(Need(accelerator, count, mine, other, preemptible))
    return out
