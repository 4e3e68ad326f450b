"""Whether a CustomJob fits the persistent resource it names (VERTEX_FACTS.md A2, "CustomJob on
it"): each worker pool's machine, accelerators and disk type equal one of the resource's pools,
with no more replicas than that pool has or may scale to. Both sides are REST JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _machine(spec: Mapping[str, Any]) -> tuple[str, str, int]:
    machine = spec.get("machineSpec") or {}
    return (str(machine.get("machineType", "")), str(machine.get("acceleratorType", "") or ""),
            int(machine.get("acceleratorCount") or 0))


def _disk_type(spec: Mapping[str, Any]) -> str:
    return str((spec.get("diskSpec") or {}).get("bootDiskType") or "pd-ssd")


def job_fits(custom_job: Mapping[str, Any], resource: Mapping[str, Any]) -> list[str]:
    """Why the job does not fit the resource, one message per pool; empty when it fits."""
    spec = custom_job.get("jobSpec", custom_job)
    pools = resource.get("resourcePools") or []
    offered = ", ".join(f"{p.get('id')}: {int(p.get('replicaCount') or 0)} x "
                        f"{_machine(p)[0]}" for p in pools)
    problems = []
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        replicas = int(pool.get("replicaCount") or 0) if pool else 0
        if not replicas:
            continue
        fits = [p for p in pools
                if _machine(p) == _machine(pool) and _disk_type(p) == _disk_type(pool)]
        room = max((max(int(p.get("replicaCount") or 0),
                        int((p.get("autoscalingSpec") or {}).get("maxReplicaCount") or 0))
                    for p in fits), default=0)
        if not fits:
            problems.append(f"worker pool {index} ({_machine(pool)[0]}) matches no pool of the "
                            f"persistent resource in machine, accelerators and disk type; its "
                            f"pools: {offered}")
        elif replicas > room:
            problems.append(f"worker pool {index} asks for {replicas} replicas; the matching "
                            f"pool of the persistent resource has {room}")
    return problems
