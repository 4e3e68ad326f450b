"""Typed rows of the catalogue (one dataclass per CSV file in ``data/``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

MachineKind = Literal["cpu", "gpu", "tpu"]
# How a machine type relates to MachineSpec.acceleratorType / acceleratorCount:
#   none      no accelerators can be attached (e2, n2, c2)
#   optional  GPUs may be attached (n1)
#   required  the machine comes with its accelerators, which the spec must name (a2, a3, a4,
#             g2, and cloud-tpu whose TPU version is chosen through acceleratorType)
#   implied   the machine type and tpuTopology choose the TPU (ct5lp, ct6e)
AcceleratorPolicy = Literal["none", "optional", "required", "implied"]


@dataclass(frozen=True)
class MachineType:
    name: str
    family: str  # n1, a2, a3, a4, g2, e2, n2, c2, ct5lp, ct6e, cloud-tpu
    series: str  # the name without its size ("a2-highgpu"): siblings for suggestions
    kind: MachineKind
    accelerators: AcceleratorPolicy
    vcpus: int | None  # None where Vertex does not publish the host size (cloud-tpu)
    memory_gb: float | None
    note: str
    source: str
    retrieved: str

    @property
    def is_tpu(self) -> bool:
        return self.kind == "tpu"


@dataclass(frozen=True)
class Accelerator:
    name: str  # the Vertex AcceleratorType enum name, e.g. NVIDIA_TESLA_A100
    number: int  # its enum number, which proto JSON also accepts
    kind: Literal["gpu", "tpu"]
    memory_gb: float  # per device: per GPU, per TPU chip (per TensorCore for TPU v2/v3)
    deprecated: bool
    display_name: str
    note: str
    source: str
    retrieved: str


@dataclass(frozen=True)
class TpuTopology:
    machine_type: str
    topology: str  # MachineSpec.tpuTopology, e.g. "2x2"
    chips: int
    vms: int
    source: str
    retrieved: str

    @property
    def is_pod(self) -> bool:
        """A slice spanning several VMs: Vertex calls these TPU Pods (no spot)."""
        return self.vms > 1


@dataclass(frozen=True)
class TpuMachine:
    machine_type: str
    generation: str  # v5e, v6e
    accelerator_type: str | None  # the AcceleratorType a spec may name, if Vertex has one
    chips_per_vm: int
    hbm_gb_per_chip: float
    note: str
    source: str
    retrieved: str
    topologies: tuple[TpuTopology, ...] = ()


@dataclass(frozen=True)
class Region:
    name: str
    location: str
    multi_region: str  # us, europe, asia: where this region pulls Vertex images from
    reduction_server_image: str
    note: str
    source: str
    retrieved: str


@dataclass(frozen=True)
class BootDiskType:
    name: str
    allowed: bool
    display_name: str
    refusal: str  # why Vertex refuses it, for types people expect to work (pd-balanced)
    min_gb: int
    max_gb: int
    source: str
    retrieved: str


@dataclass(frozen=True)
class Catalog:
    """Everything in ``data/``, indexed the ways the rules look it up.

    Shared by the whole process (the loader caches it), so its mappings are read-only views.
    """

    machines: Mapping[str, MachineType]
    accelerators: Mapping[str, Accelerator]
    # machine type -> accelerator type -> allowed counts, ascending
    combinations: Mapping[str, Mapping[str, tuple[int, ...]]]
    tpu_machines: Mapping[str, TpuMachine]
    regions: Mapping[str, Region]
    boot_disk_types: Mapping[str, BootDiskType]
    accelerators_by_number: Mapping[int, str]
