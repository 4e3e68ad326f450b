"""Vertex enums the rules need besides AcceleratorType (which lives in the catalogue data)."""

from __future__ import annotations

from vertexplan.catalog.values import enum_name

# Scheduling.Strategy (VERTEX_FACTS.md section 1). STRATEGY_UNSPECIFIED means STANDARD.
STRATEGIES: dict[str, int] = {
    "STRATEGY_UNSPECIFIED": 0,
    "ON_DEMAND": 1,
    "LOW_COST": 2,
    "STANDARD": 3,
    "SPOT": 4,
    "FLEX_START": 6,
}
DEPRECATED_STRATEGIES = frozenset({"ON_DEMAND", "LOW_COST"})
STRATEGY_CHOICES = ("STANDARD", "SPOT", "FLEX_START")

# FLEX_START (Dynamic Workload Scheduler) needs one of these GPUs in every pool: "L4, A100,
# H100, H200, B200" in VERTEX_FACTS.md, read as both A100 and both H100 variants.
FLEX_START_ACCELERATORS = (
    "NVIDIA_L4",
    "NVIDIA_TESLA_A100",
    "NVIDIA_A100_80GB",
    "NVIDIA_H100_80GB",
    "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB",
    "NVIDIA_B200",
)
FLEX_START_MAX_TIMEOUT_S = 7 * 24 * 3600

# ReservationAffinity.Type
RESERVATION_AFFINITY_TYPES: dict[str, int] = {
    "TYPE_UNSPECIFIED": 0,
    "NO_RESERVATION": 1,
    "ANY_RESERVATION": 2,
    "SPECIFIC_RESERVATION": 3,
}


def strategy_name(value: object) -> str | None:
    """The Strategy name for a JSON value given by name or number; None if neither."""
    return enum_name(value, STRATEGIES, {n: s for s, n in STRATEGIES.items()})


def reservation_affinity_name(value: object) -> str | None:
    numbers = {n: s for s, n in RESERVATION_AFFINITY_TYPES.items()}
    return enum_name(value, RESERVATION_AFFINITY_TYPES, numbers)
