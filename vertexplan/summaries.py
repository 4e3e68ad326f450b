"""Plain-text summaries of jobs for the pages. Pure: reads a CustomJob's JSON, no database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

POOL_ROLES = ("chief", "workers")


@dataclass(frozen=True)
class PoolSummary:
    role: str
    replicas: int
    machine_type: str
    accelerator_type: str
    accelerator_count: int
    tpu_topology: str
    boot_disk_type: str
    boot_disk_size_gb: int | None

    @property
    def text(self) -> str:
        """'1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100)'."""
        out = f"{self.replicas} x {self.machine_type or '?'}"
        if self.accelerator_type and self.accelerator_count:
            out += f" ({self.accelerator_count} x {self.accelerator_type})"
        elif self.tpu_topology:
            out += f" (TPU {self.tpu_topology})"
        return out


def _int(value: Any, default: int = 0) -> int:
    # Vertex's REST JSON writes int64 as strings ("replicaCount": "2").
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def pool_summaries(custom_job: dict[str, Any] | None) -> list[PoolSummary]:
    specs = ((custom_job or {}).get("jobSpec") or {}).get("workerPoolSpecs") or []
    pools = []
    for index, spec in enumerate(specs):
        if not spec:  # an empty pool is Vertex's way of leaving a slot unused
            continue
        machine = spec.get("machineSpec") or {}
        disk = spec.get("diskSpec") or {}
        pools.append(PoolSummary(
            role=POOL_ROLES[index] if index < len(POOL_ROLES) else f"pool {index}",
            replicas=_int(spec.get("replicaCount"), 1),
            machine_type=str(machine.get("machineType") or ""),
            accelerator_type=str(machine.get("acceleratorType") or ""),
            accelerator_count=_int(machine.get("acceleratorCount")),
            tpu_topology=str(machine.get("tpuTopology") or ""),
            boot_disk_type=str(disk.get("bootDiskType") or ""),
            boot_disk_size_gb=_int(disk.get("bootDiskSizeGb")) or None,
        ))
    return pools


def accelerator_summary(custom_job: dict[str, Any] | None) -> str:
    """'2 x n1-standard-4', or one part per pool joined with ' + '."""
    return " + ".join(pool.text for pool in pool_summaries(custom_job))


def severity_class(severity: int | None) -> str:
    """Cloud Logging's numeric severity -> a CSS class (ERROR and above, WARNING, DEBUG)."""
    level = severity or 0
    if level >= 500:
        return "sev-error"
    if level >= 400:
        return "sev-warning"
    if 0 < level < 200:
        return "sev-debug"
    return "sev-info"


def severity_name(severity: int | None) -> str:
    level = severity or 0
    for threshold, name in ((800, "EMERGENCY"), (700, "ALERT"), (600, "CRITICAL"),
                            (500, "ERROR"), (400, "WARNING"), (300, "NOTICE"), (200, "INFO"),
                            (100, "DEBUG")):
        if level >= threshold:
            return name
    return "DEFAULT"


def progress_percent(last_step: int | None, total_steps: int | None) -> int | None:
    if not total_steps or last_step is None:
        return None
    return max(0, min(100, round(100 * last_step / total_steps)))


def duration_text(seconds: float) -> str:
    """'42 s', '17 min', '3 h 05 min', '2 d 4 h': as long as a list column can afford."""
    s = round(seconds)
    if s < 90:
        return f"{s} s"
    minutes = round(s / 60)
    if minutes < 90:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"
