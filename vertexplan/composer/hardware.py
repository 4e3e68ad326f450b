"""The machines of a request, read once: each pool's machineSpec, diskSpec and replicaCount as
the CustomJob writes them, its shape in the catalogue (devices, memory, VMs), and the topology
the strategy spreads the model over.

Values are written as given when they cannot be read (an accelerator count of "two"): the
catalogue's validation then reports them with Vertex's own field path, which the composer maps
back to the request field. Reading never raises on a request's values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vertexplan.catalog.lookups import (
    MachineShape,
    describe_machine_spec,
    get_machine_type,
    is_tpu,
)
from vertexplan.composer.launch import Topology
from vertexplan.composer.request import (
    POOL_KEYS,
    REDUCTION_SERVER_MACHINE,
    TRAINER_ROLES,
    JobRequest,
    PoolRequest,
    blank,
)


@dataclass(frozen=True)
class Hardware:
    topology: Topology
    # role -> as the CustomJob writes it
    machine_specs: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    disk_specs: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    replica_counts: Mapping[str, Any] = field(default_factory=dict)
    # role -> the machine in the catalogue; absent where the spec names none it knows
    shapes: Mapping[str, MachineShape] = field(default_factory=dict)
    # replicas of the trainer pools (chief and workers): 0 for a count that cannot be read
    trainer_replicas: int = 0
    # The chief's machine type: a TPU machine, and one the catalogue lists.
    chief_tpu: bool = False
    chief_known: bool = False


def read_hardware(request: JobRequest) -> Hardware:
    pools = {role: _machine_of(role, p) for role, p in request.pools.items()}
    replicas = {role: _replica_number(p) for role, p in pools.items()}
    written = Hardware(
        topology=Topology(world_size=1, devices_per_replica=1, replicas=1, tpu=False),
        machine_specs={role: machine_spec(p) for role, p in pools.items()},
        disk_specs={role: _disk(p) for role, p in pools.items()},
        replica_counts={role: _replicas(p) for role, p in pools.items()},
        trainer_replicas=sum(replicas[r] for r in TRAINER_ROLES if r in replicas))
    return _in_catalogue(written, replicas, request.pools["chief"].machine_type)


def _machine_of(role: str, p: PoolRequest) -> PoolRequest:
    """The pool whose machine is written: a Reduction Server runs Google's recommended
    machine unless the pool names one, and blank fields are left out."""
    if role != "reduction_server":
        return p
    kept = {name: None if blank(getattr(p, name)) else getattr(p, name) for name in POOL_KEYS}
    if kept["machine_type"] is None:
        kept["machine_type"] = REDUCTION_SERVER_MACHINE
    return replace(p, **kept)


def machine_spec(p: PoolRequest) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": p.machine_type or ""}
    if p.accelerator_type:
        spec["acceleratorType"] = p.accelerator_type
    if p.accelerator_count not in (None, "", 0):
        spec["acceleratorCount"] = (p.accelerators if p.accelerators is not None
                                    else p.accelerator_count)
    if p.tpu_topology:
        spec["tpuTopology"] = p.tpu_topology
    if p.gpu_partition_size:
        spec["gpuPartitionSize"] = p.gpu_partition_size
    reservation = p.reservation
    if isinstance(reservation, dict) and reservation:
        affinity: dict[str, Any] = {"reservationAffinityType": reservation.get("type")}
        if reservation.get("key"):
            affinity["key"] = reservation["key"]
        if reservation.get("values"):
            affinity["values"] = reservation["values"]
        spec["reservationAffinity"] = affinity
    elif reservation not in (None, {}):
        spec["reservationAffinity"] = reservation
    return spec


def _disk(p: PoolRequest) -> dict[str, Any]:
    size = p.boot_disk_size_gb
    return {"bootDiskType": p.boot_disk_type or "pd-ssd",
            "bootDiskSizeGb": 100 if size in (None, "") else (
                p.disk_gb if p.disk_gb is not None else size)}


def _replicas(p: PoolRequest) -> Any:
    if p.replica_count in (None, ""):
        return "1"
    # int64 is a string in Vertex's REST JSON
    return str(p.replicas) if p.replicas is not None else p.replica_count


def _replica_number(p: PoolRequest) -> int:
    if p.replica_count in (None, ""):
        return 1
    return p.replicas if p.replicas is not None and p.replicas > 0 else 0


def _in_catalogue(hardware: Hardware, replicas: Mapping[str, int],
                  chief_machine: Any) -> Hardware:
    """The machines as the catalogue describes them, and the topology of the trainer pools."""
    shapes = {}
    for role, spec in hardware.machine_specs.items():
        try:
            shapes[role] = describe_machine_spec(spec)
        except ValueError:
            continue  # a machine the catalogue does not know: validation names it
    world, count, per_replica, tpu, processes = 0, 0, 0, False, 0
    for role in TRAINER_ROLES:
        if role not in replicas:
            continue
        shape = shapes.get(role)
        # Devices one replica holds: 1 for CPU and unknown machines.
        devices = max(shape.devices, 1) if shape else 1
        world += replicas[role] * devices
        count += replicas[role]
        # A GPU gets a process of its own; a TPU VM runs one process for all its chips.
        processes += replicas[role] * (shape.vms if shape and shape.kind == "tpu" else devices)
        per_replica = per_replica or devices
        tpu = tpu or bool(shape and shape.kind == "tpu")
    named = isinstance(chief_machine, str)
    return replace(
        hardware, shapes=shapes,
        topology=Topology(world_size=max(world, 1), devices_per_replica=max(per_replica, 1),
                          replicas=max(count, 1), tpu=tpu, processes=max(processes, 1)),
        chief_tpu=named and is_tpu(chief_machine),
        chief_known=named and get_machine_type(chief_machine) is not None)
