"""Questions the rest of the control plane asks the catalogue.

The composer, the memory planner and the cost estimator use these; none of them reads the CSV
files directly. Functions taking a machine spec accept Vertex's REST form (camelCase, counts as
numbers or strings, accelerator types as names or enum numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vertexplan.catalog.loader import get_catalog
from vertexplan.catalog.records import Accelerator, MachineType, Region, TpuMachine, TpuTopology
from vertexplan.catalog.suggest import did_you_mean, mean_clause
from vertexplan.catalog.values import as_int, enum_name

ACCELERATOR_UNSPECIFIED = "ACCELERATOR_TYPE_UNSPECIFIED"


class UnknownRegionError(ValueError):
    """A region the catalogue does not know; ``suggestions`` holds close names."""

    def __init__(self, region: str, suggestions: tuple[str, ...]) -> None:
        self.region = region
        self.suggestions = suggestions
        super().__init__(f"unknown region {region!r}{mean_clause(suggestions)}")


# -- machines -----------------------------------------------------------------------------------


def get_machine_type(name: str) -> MachineType | None:
    return get_catalog().machines.get(name)


def list_machine_types(
    accelerator_type: str | None = None, *, kind: str | None = None
) -> list[MachineType]:
    """Machine types in catalogue order, optionally only those that take ``accelerator_type``
    (for TPU slice machines: whose TPU is that type) or of one ``kind`` (cpu, gpu, tpu)."""
    catalog = get_catalog()
    found = []
    for machine in catalog.machines.values():
        if kind is not None and machine.kind != kind:
            continue
        if accelerator_type is not None and accelerator_type not in allowed_accelerators(
            machine.name
        ):
            tpu = catalog.tpu_machines.get(machine.name)
            if tpu is None or tpu.accelerator_type != accelerator_type:
                continue
        found.append(machine)
    return found


def is_tpu(machine_type: str) -> bool:
    machine = get_machine_type(machine_type)
    return machine is not None and machine.is_tpu


def get_accelerator(name: str) -> Accelerator | None:
    return get_catalog().accelerators.get(name)


def accelerator_name(value: object) -> str | None:
    """Normalise a JSON acceleratorType (name or enum number) to its name; None if unknown.

    ACCELERATOR_TYPE_UNSPECIFIED (0) is returned as such: callers treat it as "no accelerator".
    """
    catalog = get_catalog()
    names = [ACCELERATOR_UNSPECIFIED, *catalog.accelerators]
    return enum_name(value, names, {0: ACCELERATOR_UNSPECIFIED, **catalog.accelerators_by_number})


def allowed_accelerators(machine_type: str) -> dict[str, tuple[int, ...]]:
    """Accelerator type -> allowed counts for a machine (empty for CPU and TPU-slice machines)."""
    return dict(get_catalog().combinations.get(machine_type, {}))


def allowed_accelerator_counts(
    machine_type: str, accelerator_type: str | None = None
) -> tuple[int, ...]:
    """Counts a machine takes of ``accelerator_type``, or of any accelerator when None."""
    combos = allowed_accelerators(machine_type)
    if accelerator_type is not None:
        return combos.get(accelerator_type, ())
    return tuple(sorted({n for counts in combos.values() for n in counts}))


def machines_for_accelerator(accelerator_type: str, count: int | None = None) -> list[str]:
    """Machine types that take ``accelerator_type`` (``count`` of them, when given).

    TPU slice machines (whose topology, not a count, sizes the TPU) are listed when no count
    is given.
    """
    catalog = get_catalog()
    found = [
        machine
        for machine, combos in catalog.combinations.items()
        if accelerator_type in combos and (count is None or count in combos[accelerator_type])
    ]
    if count is None:
        found += [
            tpu.machine_type
            for tpu in catalog.tpu_machines.values()
            if tpu.accelerator_type == accelerator_type
        ]
    return found


def get_tpu_machine(machine_type: str) -> TpuMachine | None:
    return get_catalog().tpu_machines.get(machine_type)


def tpu_topologies(machine_type: str) -> tuple[TpuTopology, ...]:
    tpu = get_tpu_machine(machine_type)
    return tpu.topologies if tpu else ()


def get_tpu_topology(machine_type: str, topology: str) -> TpuTopology | None:
    return next((t for t in tpu_topologies(machine_type) if t.topology == topology), None)


def default_tpu_topology(machine_type: str) -> TpuTopology | None:
    """The topology Vertex can only mean when a spec leaves tpuTopology empty: a TPU machine
    with a single topology. None when the machine offers several (the spec must choose)."""
    topologies = tpu_topologies(machine_type)
    return topologies[0] if len(topologies) == 1 else None


def is_tpu_pod(machine_type: str, topology: str | None) -> bool:
    """True when this TPU slice spans several VMs (a TPU Pod slice: no spot)."""
    topo = get_tpu_topology(machine_type, topology) if topology else None
    topo = topo or default_tpu_topology(machine_type)
    return topo is not None and topo.is_pod


# -- a machine spec's shape ---------------------------------------------------------------------


@dataclass(frozen=True)
class MachineShape:
    """What one replica of a worker pool has, for memory plans and world sizes.

    ``devices_per_vm`` is the GPU count, the TPU chips per VM (ct5lp/ct6e) or the TPU cores
    counted by acceleratorCount (cloud-tpu). A multi-host TPU slice is still one replica in
    Vertex's terms but spans ``vms`` VMs.
    """

    machine_type: str
    kind: str  # cpu, gpu, tpu
    accelerator_type: str | None  # enum name, or e.g. "TPU v6e" where Vertex has no enum
    devices_per_vm: int
    vms: int
    device_memory_gb: float | None

    @property
    def devices(self) -> int:
        return self.devices_per_vm * self.vms


def describe_machine_spec(machine_spec: Mapping[str, object]) -> MachineShape:
    """The shape of a (valid) MachineSpec; ValueError says what is missing or unknown."""
    name = machine_spec.get("machineType")
    machine = get_machine_type(name) if isinstance(name, str) else None
    if machine is None:
        raise ValueError(f"unknown machineType {name!r}")
    tpu = get_tpu_machine(machine.name)
    if tpu is not None:
        topo_name = machine_spec.get("tpuTopology")
        topo = (
            get_tpu_topology(machine.name, topo_name)
            if isinstance(topo_name, str) and topo_name
            else default_tpu_topology(machine.name)
        )
        if topo is None:
            raise ValueError(f"{machine.name} needs a tpuTopology of its own, got {topo_name!r}")
        return MachineShape(
            machine_type=machine.name,
            kind="tpu",
            accelerator_type=tpu.accelerator_type or f"TPU {tpu.generation}",
            devices_per_vm=tpu.chips_per_vm,
            vms=topo.vms,
            device_memory_gb=tpu.hbm_gb_per_chip,
        )
    raw_type = machine_spec.get("acceleratorType")
    acc_name = accelerator_name(raw_type) if raw_type is not None else None
    if raw_type is not None and acc_name is None:
        raise ValueError(f"unknown acceleratorType {raw_type!r}")
    if acc_name in (None, ACCELERATOR_UNSPECIFIED):
        return MachineShape(machine.name, machine.kind, None, 0, 1, None)
    count = as_int(machine_spec.get("acceleratorCount", 0), bits=32)
    if count is None or count < 0:
        raise ValueError(f"bad acceleratorCount {machine_spec.get('acceleratorCount')!r}")
    accelerator = get_catalog().accelerators[acc_name]
    return MachineShape(
        machine_type=machine.name,
        kind=accelerator.kind,
        accelerator_type=acc_name,
        devices_per_vm=count,
        vms=1,
        device_memory_gb=accelerator.memory_gb,
    )


def devices_per_replica(machine_spec: Mapping[str, object]) -> int:
    """GPUs of one replica, or TPU chips per VM (cores for cloud-tpu); 0 for CPU machines."""
    return describe_machine_spec(machine_spec).devices_per_vm


def device_memory_gb(machine_spec: Mapping[str, object]) -> float | None:
    """Memory of one device (GPU, TPU chip; TPU core for cloud-tpu); None without devices."""
    return describe_machine_spec(machine_spec).device_memory_gb


def vms_per_replica(machine_spec: Mapping[str, object]) -> int:
    """VMs behind one replica: more than 1 only for multi-host TPU slices."""
    return describe_machine_spec(machine_spec).vms


# -- regions ------------------------------------------------------------------------------------


def list_regions() -> list[Region]:
    return list(get_catalog().regions.values())


def get_region(name: str) -> Region:
    regions = get_catalog().regions
    if name not in regions:
        raise UnknownRegionError(name, did_you_mean(name, regions))
    return regions[name]


def reduction_server_image(region: str) -> str:
    """The Reduction Server image from the region's multi-region Artifact Registry."""
    return get_region(region).reduction_server_image
