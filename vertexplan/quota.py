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
    """The job's accelerators by type, with the quota each draws on (REST JSON in). A job
    placed on a persistent resource (jobSpec.persistentResourceId) runs on that resource's
    machines and asks for none of its own: the resource holds them (resource_needs)."""
    spec = custom_job.get("jobSpec") or {}
    if spec.get("persistentResourceId"):
        return []
    preemptible = scheduling_of(custom_job) in quota_metrics.PREEMPTIBLE
    return _needs(spec.get("workerPoolSpecs") or [], preemptible)


def resource_needs(resource: dict[str, Any]) -> list[Need]:
    """A persistent resource's accelerators (REST JSON in): each pool at the most replicas it
    may scale to, on the on-demand training quotas (docs training/persistent-resource-overview
    says persistent resources draw on the custom training quota; that they use the same
    metrics as a CustomJob's on-demand pools is this module's reading, not a stated fact)."""
    pools = []
    for pool in resource.get("resourcePools") or []:
        if not isinstance(pool, dict):
            continue
        try:
            replicas = max(int(pool.get("replicaCount") or 0),
                           int((pool.get("autoscalingSpec") or {}).get("maxReplicaCount") or 0))
        except (TypeError, ValueError):
            continue
        pools.append({"machineSpec": pool.get("machineSpec") or {}, "replicaCount": replicas})
    return _needs(pools, preemptible=False)


def _needs(pools: list[Any], preemptible: bool) -> list[Need]:
    counts: dict[str, int] = {}
    for pool in pools:
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
