"""Rules on the worker pool list and on each pool's replicas, machine and disk."""

from __future__ import annotations

from collections.abc import Iterator

from vertexplan.catalog.enums import RESERVATION_AFFINITY_TYPES, reservation_affinity_name
from vertexplan.catalog.errors import FieldError, item
from vertexplan.catalog.loader import get_catalog
from vertexplan.catalog.rules._common import json_type, short, wrong_type
from vertexplan.catalog.suggest import did_you_mean, mean_clause, or_list
from vertexplan.catalog.values import as_int
from vertexplan.catalog.view import POOLS_PATH, JobView, read

MAX_POOLS = 4
POOL_ROLES = ("chief", "workers", "parameter servers or Reduction Server", "evaluators")


def check_worker_pools(view: JobView) -> Iterator[FieldError]:
    """jobSpec and workerPoolSpecs exist, at most four pools, the chief pool is not empty."""
    if not isinstance(view.job, dict):
        return
    spec = view.job_spec
    if not spec.present:
        yield FieldError(
            "jobSpec",
            "jobSpec is required: it holds workerPoolSpecs, the machines and containers to run",
        )
        return
    if spec.bad:
        yield wrong_type(spec, "an object (a CustomJobSpec)")
        return
    pools = view.pools_field
    if not pools.present:
        yield FieldError(
            POOLS_PATH,
            "jobSpec.workerPoolSpecs is required: at least workerPoolSpecs[0], the chief pool",
        )
        return
    if pools.bad:
        yield wrong_type(pools, "a list of worker pool specs")
        return
    if not view.pools:
        yield FieldError(
            POOLS_PATH,
            "jobSpec.workerPoolSpecs is empty: give at least workerPoolSpecs[0], the chief pool",
        )
        return
    if len(view.pools) > MAX_POOLS:
        roles = ", ".join(f"{i} {role}" for i, role in enumerate(POOL_ROLES))
        yield FieldError(
            item(POOLS_PATH, MAX_POOLS),
            f"Vertex takes at most {MAX_POOLS} worker pools ({roles}); this job has "
            f"{len(view.pools)}",
        )
    for pool in view.pools:
        if not pool.is_object:
            yield FieldError(
                pool.path,
                f"workerPoolSpecs[{pool.index}] must be an object (a WorkerPoolSpec, "
                f"or {{}} for an unused pool after the first), got {json_type(pool.raw)}",
            )
    first = view.pools[0]
    if first.is_empty:
        yield FieldError(
            first.path,
            "workerPoolSpecs[0] is the chief pool and cannot be empty: give it a "
            "machineSpec, replicaCount 1 and a containerSpec",
        )


def check_replica_counts(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        f = pool.replica_count
        name = f"workerPoolSpecs[{pool.index}]"
        if not f.present:
            need = "1 (the chief pool runs exactly one)" if pool.index == 0 else "1 or more"
            yield FieldError(
                f.path,
                f"{name}.replicaCount is required (left out it means 0 replicas): use {need}",
                ("1",),
            )
        elif f.bad:
            yield FieldError(
                f.path,
                f"{name}.replicaCount must be a whole number, as a JSON number or an "
                f'int64 string such as "1"; got {short(f.raw)}',
            )
        elif f.value < 1:
            hint = (
                "the chief pool runs exactly 1"
                if pool.index == 0
                else "a pool in use needs at least 1; to leave this pool unused replace it with {}"
            )
            yield FieldError(f.path, f"{name} asks for {f.value} replicas: {hint}", ("1",))
        elif pool.index == 0 and f.value != 1:
            yield FieldError(
                f.path,
                f"workerPoolSpecs[0] is the chief pool and runs exactly 1 replica "
                f"(got {f.value}): put the other {f.value - 1} in workerPoolSpecs[1]",
                ("1",),
            )


def check_machine_types(view: JobView) -> Iterator[FieldError]:
    machines = get_catalog().machines
    for pool in view.active_pools:
        spec = pool.machine_spec
        if not spec.present:
            yield FieldError(
                spec.path,
                f"workerPoolSpecs[{pool.index}].machineSpec is required: name its "
                "machineType (e.g. n1-standard-8)",
            )
            continue
        if spec.bad:
            yield wrong_type(spec, "an object (a MachineSpec)")
            continue
        f = pool.machine_type
        if not f.present or f.raw == "":
            yield FieldError(
                f.path,
                "machineSpec.machineType is required (e.g. n1-standard-8, "
                "a2-highgpu-1g, ct5lp-hightpu-4t)",
            )
        elif f.bad:
            yield wrong_type(f, "a machine type name", '"n1-standard-8"')
        elif f.value not in machines:
            close = did_you_mean(f.value, machines)
            families = or_list(sorted({m.family for m in machines.values()}))
            yield FieldError(
                f.path,
                f"machineType {short(f.value)} is not a Vertex training machine type in "
                f"the catalogue{mean_clause(close)}"
                + ("" if close else f" (families: {families})"),
                close,
            )


def check_reservation_affinity(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        f = read(pool.machine_spec.value, pool.machine_spec.path, "reservationAffinity")
        if not f.present:
            continue
        if not isinstance(f.raw, dict):
            yield wrong_type(f, "an object", '{"reservationAffinityType": "ANY_RESERVATION"}')
            continue
        kind = read(f.raw, f.path, "reservationAffinityType")
        name = reservation_affinity_name(kind.raw) if kind.present else None
        choices = [t for t in RESERVATION_AFFINITY_TYPES if t != "TYPE_UNSPECIFIED"]
        if not kind.present:
            yield FieldError(
                kind.path,
                f"reservationAffinityType is required: {or_list(choices)}",
                tuple(choices),
            )
            continue
        if name is None:
            close = did_you_mean(str(kind.raw), choices)
            yield FieldError(
                kind.path,
                f"reservationAffinityType {short(kind.raw)} is not one of "
                f"{or_list(choices)}{mean_clause(close)}",
                close or tuple(choices),
            )
            continue
        if name == "SPECIFIC_RESERVATION":
            key = read(f.raw, f.path, "key")
            values = read(f.raw, f.path, "values")
            if not key.present or not isinstance(key.raw, str) or not key.raw:
                yield FieldError(
                    key.path,
                    'SPECIFIC_RESERVATION needs key "compute.googleapis.com/reservation-name"',
                    ("compute.googleapis.com/reservation-name",),
                )
            if not (
                values.present
                and isinstance(values.raw, list)
                and values.raw
                and all(isinstance(v, str) and v for v in values.raw)
            ):
                yield FieldError(
                    values.path,
                    "SPECIFIC_RESERVATION needs values: the reservation names "
                    "(projects/{project}/zones/{zone}/reservations/{name})",
                )


def check_disks(view: JobView) -> Iterator[FieldError]:
    disks = get_catalog().boot_disk_types
    allowed = [d.name for d in disks.values() if d.allowed]
    for pool in view.active_pools:
        spec = pool.disk_spec
        if not spec.present:
            continue  # Vertex's default: pd-ssd, 100 GB
        if spec.bad:
            yield wrong_type(spec, "an object", '{"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}')
            continue
        kind = read(spec.value, spec.path, "bootDiskType")
        disk = None
        if kind.present and kind.raw != "":
            disk = disks.get(kind.raw) if isinstance(kind.raw, str) else None
            if not isinstance(kind.raw, str):
                yield wrong_type(kind, f"a disk type: {or_list(allowed)}")
            elif disk is not None and not disk.allowed:
                yield FieldError(
                    kind.path, f"bootDiskType {disk.name}: {disk.refusal}", tuple(allowed)
                )
            elif disk is None:
                close = did_you_mean(kind.raw, allowed)
                yield FieldError(
                    kind.path,
                    f"bootDiskType {short(kind.raw)} is not a Vertex boot disk type: "
                    f"use {or_list(allowed)}{mean_clause(close)}",
                    close or tuple(allowed),
                )
        reference = disk if disk is not None and disk.allowed else disks[allowed[0]]
        size = read(spec.value, spec.path, "bootDiskSizeGb", lambda v: as_int(v, bits=32))
        if not size.present:
            continue
        if size.bad:
            yield wrong_type(size, "a whole number of GB", "200")
        elif size.value < reference.min_gb:
            yield FieldError(
                size.path,
                f"bootDiskSizeGb {size.value} is too small: a Vertex boot disk is at "
                f"least {reference.min_gb} GB (and at most {reference.max_gb})",
                (str(reference.min_gb),),
            )
        elif size.value > reference.max_gb:
            yield FieldError(
                size.path,
                f"bootDiskSizeGb {size.value} is too large: a Vertex boot disk is at "
                f"most {reference.max_gb} GB; keep data in Cloud Storage or an NFS/Lustre mount",
                (str(reference.max_gb),),
            )
