"""CustomJob REST JSON for the cost tests, and an independent half-up rounding."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

IMAGE = "us-docker.pkg.dev/my-project/training/trainer:latest"
REDUCTION_SERVER = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"


def pool(
    machine_type: str,
    accelerator: str | None = None,
    count: int | None = None,
    *,
    replicas: int | str = "1",
    topology: str | None = None,
    disk: tuple[str, int] | None = None,
    image: str = IMAGE,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine_type}
    if accelerator is not None:
        spec["acceleratorType"] = accelerator
        spec["acceleratorCount"] = count
    if topology is not None:
        spec["tpuTopology"] = topology
    result: dict[str, Any] = {
        "machineSpec": spec,
        "replicaCount": replicas,
        "containerSpec": {"imageUri": image},
    }
    if disk is not None:
        result["diskSpec"] = {"bootDiskType": disk[0], "bootDiskSizeGb": disk[1]}
    return result


def job(*pools: dict[str, Any], strategy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"workerPoolSpecs": list(pools)}
    if strategy is not None:
        spec["scheduling"] = {"strategy": strategy}
    return {"displayName": "cost-test", "jobSpec": spec}


def micros(usd: Decimal) -> int:
    """Dollars to whole micro-dollars, half-up: the hand arithmetic's one rounding per line."""
    return int((usd * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def cents(amount_micros: int) -> Decimal:
    """Micro-dollars as dollars to the cent, half-up."""
    return (Decimal(amount_micros) / 1_000_000).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
