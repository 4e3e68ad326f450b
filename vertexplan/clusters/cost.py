"""What a persistent resource costs per hour while it exists.

A persistent resource bills for every provisioned replica from creation to deletion, busy or
idle (VERTEX_FACTS.md section 3: per-VM billing while the resource exists). Its pools are priced
as a CustomJob's worker pools are (``vertexplan.pricing.job_estimate``), at the on-demand rate:
the current replicas, and for an autoscaled pool also its floor (min) and ceiling (max).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vertexplan.pricing import Estimate, PriceTable, PricingError, job_estimate

BILLING_NOTE = ("A persistent resource bills for every provisioned node from creation until "
                "deletion, whether or not a job runs on it.")


@dataclass(frozen=True)
class ClusterCost:
    hourly_micros: int  # at the current replica counts
    min_hourly_micros: int  # every autoscaled pool at its min
    max_hourly_micros: int  # every autoscaled pool at its max
    estimate: Estimate  # the current figure, line by line, with its sources
    note: str = BILLING_NOTE


def _as_job(pools: list[Mapping[str, Any]], pick: str) -> dict[str, Any]:
    """The resource's pools as CustomJob worker pools with the replica count PICKed."""
    specs = []
    for pool in pools:
        replicas = int(pool.get("replicaCount") or 1)
        scaling = pool.get("autoscalingSpec") or {}
        if pick == "min" and scaling:
            replicas = int(scaling.get("minReplicaCount") or 0)
        elif pick == "max" and scaling:
            replicas = int(scaling.get("maxReplicaCount") or replicas)
        spec = {"machineSpec": pool["machineSpec"], "replicaCount": str(replicas)}
        if "diskSpec" in pool:
            spec["diskSpec"] = pool["diskSpec"]
        specs.append(spec if replicas else {})
    return {"jobSpec": {"workerPoolSpecs": specs}}


def _total(pools: list[Mapping[str, Any]], pick: str, region: str,
           table: PriceTable | None) -> tuple[int, Estimate | None]:
    job = _as_job(pools, pick)
    if not any(job["jobSpec"]["workerPoolSpecs"]):
        return 0, None  # every pool scaled to zero
    estimate = job_estimate.hourly(job, region, table)
    return estimate.hourly.on_demand, estimate


def hourly_cost(resource: Mapping[str, Any], region: str,
                table: PriceTable | None = None) -> ClusterCost:
    """The resource's hourly cost in micro-dollars; PricingError names what has no price."""
    pools = resource.get("resourcePools")
    if not isinstance(pools, list) or not pools:
        raise PricingError([])
    current, estimate = _total(pools, "current", region, table)
    low, _ = _total(pools, "min", region, table)
    high, _ = _total(pools, "max", region, table)
    if estimate is None:  # only a Ray cluster whose every pool sits at zero has no estimate
        _, estimate = _total(pools, "max", region, table)
    assert estimate is not None
    return ClusterCost(current, low, high, estimate)
