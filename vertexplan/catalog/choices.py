"""Choices for forms and API schemas, in Django's (value, label) format, without Django."""

from __future__ import annotations

from vertexplan.catalog.enums import STRATEGY_CHOICES
from vertexplan.catalog.loader import get_catalog
from vertexplan.catalog.lookups import (
    allowed_accelerators,
    get_tpu_machine,
    list_machine_types,
    tpu_topologies,
)
from vertexplan.catalog.records import MachineType

Choice = tuple[str, str]

FAMILY_LABELS = {
    "n1": "N1: general purpose, attach P4, P100, T4 or V100 GPUs",
    "a2": "A2: NVIDIA A100",
    "a3": "A3: NVIDIA H100 / H200",
    "a4": "A4: NVIDIA B200",
    "g2": "G2: NVIDIA L4",
    "e2": "E2: CPU only",
    "n2": "N2: CPU only",
    "c2": "C2: CPU only, compute optimised",
    "cloud-tpu": "Cloud TPU v2 / v3",
    "ct5lp": "TPU v5e",
    "ct5p": "TPU v5p",
    "ct6e": "TPU v6e (Trillium)",
}

STRATEGY_LABELS = {
    "STANDARD": "Standard (on-demand VMs)",
    "SPOT": "Spot (preemptible, cheaper; not on TPU Pods)",
    "FLEX_START": "Flex-start (Dynamic Workload Scheduler; L4/A100/H100/H200/B200, up to 7 days)",
}


def machine_label(machine: MachineType) -> str:
    """'a2-highgpu-4g: 48 vCPU, 340 GB, 4 x NVIDIA_TESLA_A100 (40 GB)'."""
    parts = []
    if machine.vcpus is not None:
        parts.append(f"{machine.vcpus} vCPU")
    if machine.memory_gb is not None:
        parts.append(f"{machine.memory_gb:g} GB")
    accelerators = get_catalog().accelerators
    if machine.accelerators == "required":
        for acc, counts in allowed_accelerators(machine.name).items():
            count = "/".join(str(n) for n in counts)
            parts.append(f"{count} x {acc} ({accelerators[acc].memory_gb:g} GB)")
    tpu = get_tpu_machine(machine.name)
    if tpu is not None:
        parts.append(
            f"TPU {tpu.generation}, {tpu.chips_per_vm} chip{'s' if tpu.chips_per_vm > 1 else ''}"
            f" per VM ({tpu.hbm_gb_per_chip:g} GB each)"
        )
    return f"{machine.name}: {', '.join(parts)}" if parts else machine.name


def machine_type_choices(accelerator_type: str | None = None) -> list[tuple[str, list[Choice]]]:
    """Machine types grouped by family: [(family label, [(name, label), ...]), ...]."""
    groups: dict[str, list[Choice]] = {}
    for machine in list_machine_types(accelerator_type):
        label = FAMILY_LABELS.get(machine.family, machine.family)
        groups.setdefault(label, []).append((machine.name, machine_label(machine)))
    return list(groups.items())


def accelerator_type_choices(
    kind: str | None = None, *, include_deprecated: bool = False
) -> list[Choice]:
    """Accelerator types that some catalogue machine takes, optionally of one kind (gpu, tpu)."""
    catalog = get_catalog()
    offered = {acc for combos in catalog.combinations.values() for acc in combos}
    offered |= {t.accelerator_type for t in catalog.tpu_machines.values() if t.accelerator_type}
    return [
        (acc.name, f"{acc.display_name} ({acc.memory_gb:g} GB)")
        for acc in catalog.accelerators.values()
        if acc.name in offered
        and (kind is None or acc.kind == kind)
        and (include_deprecated or not acc.deprecated)
    ]


def accelerator_count_choices(machine_type: str, accelerator_type: str) -> list[Choice]:
    counts = allowed_accelerators(machine_type).get(accelerator_type, ())
    return [(str(n), str(n)) for n in counts]


def tpu_topology_choices(machine_type: str) -> list[Choice]:
    return [
        (
            t.topology,
            f"{t.topology}: {t.chips} chips on {t.vms} VM{'s' if t.vms > 1 else ''}"
            + (" (TPU Pod: no spot)" if t.is_pod else ""),
        )
        for t in tpu_topologies(machine_type)
    ]


def boot_disk_type_choices() -> list[Choice]:
    return [(d.name, d.display_name) for d in get_catalog().boot_disk_types.values() if d.allowed]


def region_choices() -> list[Choice]:
    return [(r.name, f"{r.name} ({r.location})") for r in get_catalog().regions.values()]


def strategy_choices() -> list[Choice]:
    return [(s, STRATEGY_LABELS[s]) for s in STRATEGY_CHOICES]
