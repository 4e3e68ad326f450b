"""One CustomJob field at a time, read as the job request writes it (Vertex's defaults
written out, numbers read where they can be, anything unreadable kept as it is)."""

from __future__ import annotations

from typing import Any

from vertexplan.catalog.lookups import ACCELERATOR_UNSPECIFIED, accelerator_name
from vertexplan.catalog.values import as_int, parse_duration


def container(c: Any) -> dict[str, Any]:
    """A container spec with Vertex's defaults written out, for comparisons."""
    c = c if isinstance(c, dict) else {}
    env = [{"name": e.get("name"), "value": e.get("value", "")} if isinstance(e, dict) else e
           for e in (c.get("env") or [])]
    return {"imageUri": c.get("imageUri"), "command": list(c.get("command") or []),
            "args": list(c.get("args") or []), "env": env}


def pool_task(pool: Any) -> dict[str, Any]:
    """What a pool runs, as ``container`` writes it, whichever of containerSpec and
    pythonPackageSpec it has (a package's executor image stands as its image)."""
    pool = pool if isinstance(pool, dict) else {}
    package = pool.get("pythonPackageSpec")
    if isinstance(package, dict) and "containerSpec" not in pool:
        return container({"imageUri": package.get("executorImageUri"),
                          "args": package.get("args"), "env": package.get("env")})
    return container(pool.get("containerSpec"))


def package_fields(pool: Any) -> dict[str, Any] | None:
    """The request's python_package section for a pool with a pythonPackageSpec."""
    package = pool.get("pythonPackageSpec") if isinstance(pool, dict) else None
    if not isinstance(package, dict):
        return None
    return {"executor_image_uri": package.get("executorImageUri", ""),
            "package_uris": package.get("packageUris", []),
            "python_module": package.get("pythonModule", "")}


def env_dict(env: list[Any]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for entry in env:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or entry["name"] in out:
            return None
        out[entry["name"]] = entry.get("value", "")
    return out


def machine_fields(spec: Any) -> dict[str, Any]:
    spec = spec if isinstance(spec, dict) else {}
    out: dict[str, Any] = {}
    if "machineType" in spec:
        out["machine_type"] = spec["machineType"]
    if spec.get("acceleratorType") is not None:
        name = accelerator_name(spec["acceleratorType"])
        if name != ACCELERATOR_UNSPECIFIED:
            out["accelerator_type"] = name or spec["acceleratorType"]
    if spec.get("acceleratorCount") not in (None, 0, "0"):
        count = as_int(spec["acceleratorCount"], bits=32)
        out["accelerator_count"] = count if count is not None else spec["acceleratorCount"]
    if spec.get("tpuTopology"):
        out["tpu_topology"] = spec["tpuTopology"]
    if spec.get("gpuPartitionSize"):
        out["gpu_partition_size"] = spec["gpuPartitionSize"]
    affinity = spec.get("reservationAffinity")
    if isinstance(affinity, dict):
        reservation = {"type": affinity.get("reservationAffinityType")}
        for key in ("key", "values"):
            if affinity.get(key):
                reservation[key] = affinity[key]
        out["reservation"] = reservation
    elif affinity is not None:
        out["reservation"] = affinity
    return out


def disk_fields(spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        return {}
    out: dict[str, Any] = {}
    if spec.get("bootDiskType"):
        out["boot_disk_type"] = spec["bootDiskType"]
    if spec.get("bootDiskSizeGb") not in (None, 0):
        size = as_int(spec["bootDiskSizeGb"], bits=32)
        out["boot_disk_size_gb"] = size if size is not None else spec["bootDiskSizeGb"]
    return out


def mount_fields(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [{"server": m.get("server"), "path": m.get("path"), "mount_point": m.get("mountPoint")}
            if isinstance(m, dict) else m for m in value]


def duration_hours(value: Any) -> Any:
    seconds = parse_duration(value)
    if seconds is None:
        return value
    number = float(seconds) / 3600
    return int(number) if number.is_integer() else number
