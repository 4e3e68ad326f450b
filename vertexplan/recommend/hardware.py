"""The hardware a recommendation can run on: every valid GPU and TPU shape in the catalogue.

One ``Hardware`` is a chief pool (machine, accelerators or TPU topology) run on ``nodes``
replicas: GPU jobs add ``nodes - 1`` workers of the chief's machine, a TPU slice is one replica
however many VMs its topology spans. Only combinations the catalogue lists are produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vertexplan import catalog, memory
from vertexplan.catalog import MachineShape

DEFAULT_BOOT_DISK = {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}


@dataclass(frozen=True)
class Hardware:
    kind: str  # gpu or tpu
    machine_type: str
    accelerator_type: str | None  # None for TPU slice machines (the machine implies it)
    accelerator_count: int  # GPUs per node; TPU cores for cloud-tpu; 0 for slice machines
    tpu_topology: str | None
    nodes: int
    shape: MachineShape
    host_memory_gb: float | None

    @property
    def device(self) -> str:
        """The device's name: an AcceleratorType, or e.g. "TPU v6e"."""
        return self.shape.accelerator_type or self.machine_type

    @property
    def devices(self) -> int:
        return self.shape.devices * self.nodes

    @property
    def vms(self) -> int:
        return self.shape.vms * self.nodes

    @property
    def series(self) -> str:
        """The machine's name without its size ("a3-highgpu"): what decides its network."""
        return self.machine_type.rsplit("-", 1)[0]

    @property
    def is_tpu(self) -> bool:
        return self.kind == "tpu"

    @property
    def is_tpu_pod(self) -> bool:
        return self.shape.vms > 1

    def chief(self) -> dict[str, Any]:
        """The chief pool of a job request."""
        pool: dict[str, Any] = {"machine_type": self.machine_type}
        if self.accelerator_type:
            pool["accelerator_type"] = self.accelerator_type
            pool["accelerator_count"] = self.accelerator_count
        if self.tpu_topology:
            pool["tpu_topology"] = self.tpu_topology
        return {**pool, **DEFAULT_BOOT_DISK}

    def custom_job_spec(self) -> dict[str, Any]:
        """A CustomJobSpec with only what is billed: machines, accelerators and boot disks."""
        spec: dict[str, Any] = {"machineType": self.machine_type}
        if self.accelerator_type:
            spec["acceleratorType"] = self.accelerator_type
            spec["acceleratorCount"] = self.accelerator_count
        if self.tpu_topology:
            spec["tpuTopology"] = self.tpu_topology
        disk = {"bootDiskType": DEFAULT_BOOT_DISK["boot_disk_type"],
                "bootDiskSizeGb": DEFAULT_BOOT_DISK["boot_disk_size_gb"]}
        pools = [{"machineSpec": spec, "replicaCount": "1", "diskSpec": disk}]
        if self.nodes > 1:
            pools.append({"machineSpec": spec, "replicaCount": str(self.nodes - 1),
                          "diskSpec": disk})
        return {"workerPoolSpecs": pools}

    def describe(self) -> str:
        """'2 x a2-highgpu-8g (16 x NVIDIA_TESLA_A100)', 'ct5lp-hightpu-4t 4x4 (16 chips)'."""
        if self.tpu_topology:
            chips = "chip" if self.devices == 1 else "chips"
            return f"{self.machine_type} {self.tpu_topology} ({self.devices} {chips})"
        nodes = f"{self.nodes} x " if self.nodes > 1 else ""
        return f"{nodes}{self.machine_type} ({self.devices} x {self.device})"

    def memory_plan(self, model: memory.ModelShape, strategy: str, *,
                    tpu_sharding: str = "replicated") -> memory.MemoryPlan:
        """The plan the composer makes for this hardware (vertexplan.composer.planning)."""
        layout = memory.Layout(strategy=strategy,
                               devices_per_node=max(self.shape.devices_per_vm, 1),
                               nodes=self.vms, tpu_sharding=tpu_sharding)
        return memory.plan(model, layout, device_memory_gib=self.shape.device_memory_gb,
                           host_memory_gib=self.host_memory_gb, gpu=True)


def _hardware(kind: str, machine: str, spec: dict[str, Any], nodes: int) -> Hardware | None:
    try:
        shape = catalog.describe_machine_spec(spec)
    except ValueError:
        return None
    known = catalog.get_machine_type(machine)
    return Hardware(kind=kind, machine_type=machine,
                    accelerator_type=spec.get("acceleratorType"),
                    accelerator_count=int(spec.get("acceleratorCount", 0)),
                    tpu_topology=spec.get("tpuTopology"), nodes=nodes, shape=shape,
                    host_memory_gb=known.memory_gb if known else None)


def gpu_hardware(max_nodes: int) -> Iterator[Hardware]:
    """Every listed machine x GPU x count, on 1 to ``max_nodes`` nodes (no deprecated GPUs)."""
    cat = catalog.get_catalog()
    for machine, combos in cat.combinations.items():
        for accelerator, counts in combos.items():
            info = cat.accelerators.get(accelerator)
            if info is None or info.kind != "gpu" or info.deprecated:
                continue
            for count in counts:
                spec = {"machineType": machine, "acceleratorType": accelerator,
                        "acceleratorCount": count}
                for nodes in range(1, max_nodes + 1):
                    found = _hardware("gpu", machine, spec, nodes)
                    if found is not None:
                        yield found


def tpu_hardware() -> Iterator[Hardware]:
    """Every TPU slice machine x topology, and cloud-tpu's TPU v2/v3 hosts: one replica each."""
    cat = catalog.get_catalog()
    for tpu in cat.tpu_machines.values():
        for topology in tpu.topologies:
            spec = {"machineType": tpu.machine_type, "tpuTopology": topology.topology}
            found = _hardware("tpu", tpu.machine_type, spec, 1)
            if found is not None:
                yield found
    for machine, combos in cat.combinations.items():
        for accelerator, counts in combos.items():
            info = cat.accelerators.get(accelerator)
            if info is None or info.kind != "tpu" or info.deprecated:
                continue
            for count in counts:
                spec = {"machineType": machine, "acceleratorType": accelerator,
                        "acceleratorCount": count}
                found = _hardware("tpu", machine, spec, 1)
                if found is not None:
                    yield found
