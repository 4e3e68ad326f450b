"""What a model can be deployed on, and what that costs an hour: the deploy form's menus.

The machines are the catalogue's (vertexplan.catalog) CPU and NVIDIA GPU machines: every
serving runtime runs PyTorch, Triton or a TensorRT engine on a CPU or an NVIDIA GPU, never a
TPU. A machine that comes with its GPUs (a2, a3, g2) is offered with them; an n1 machine takes
GPUs of the accelerator menu. A tensorrt model runs only on the GPU its engine was built on
(tensorrt_engine.py), so only the machines that take that GPU are valid for it.

Prices are the price table's (vertexplan.pricing, integer micro-dollars), with the source and
retrieval date of each row used: the machine's hourly rate, plus the GPUs' for an n1 machine (an
a2/a3/g2 machine's rate already includes its GPUs). Vertex bills a deployed model per node hour;
the shipped table holds Vertex's custom-training rates only, and the page says that is what it
shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from controlplane.serving.models import ModelEntry
from controlplane.serving.tensorrt_engine import ACCELERATOR_TYPE as TENSORRT_DEFAULT_GPU
from vertexplan.catalog import (
    MachineType,
    allowed_accelerators,
    get_machine_type,
    list_machine_types,
)
from vertexplan.pricing import PriceRow, default_table, display_usd, usd_to_micros

SERVING_KINDS = ("cpu", "gpu")


@dataclass(frozen=True)
class Price:
    """The hourly price of one replica, or why there is none."""

    micros: int | None  # per replica per hour; None where a row is missing
    rows: tuple[PriceRow, ...] = ()
    missing: str = ""  # "no price for NVIDIA_L4 in us-west9": why micros is None

    @property
    def retrieved(self) -> str:
        """The oldest retrieval date of the rows used ('2026-07-30')."""
        dates = [d for row in self.rows for d in row.dates]
        return min(dates) if dates else ""

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(row.source for row in self.rows))

    def for_replicas(self, replicas: int) -> int | None:
        return None if self.micros is None else self.micros * replicas


def region() -> str:
    """Endpoints are created in the product's region (controlplane/backends/serving.py)."""
    return str(settings.VERTEX_REGION)


def serving_machines() -> list[MachineType]:
    return [m for m in list_machine_types() if m.kind in SERVING_KINDS]


def built_in_gpus(machine: MachineType) -> tuple[str, int] | None:
    """(accelerator, count) a machine comes with (a2-highgpu-1g: one A100), when it has one
    combination only; None for a CPU machine or one whose GPUs are chosen (n1)."""
    if machine.accelerators != "required":
        return None
    combos = allowed_accelerators(machine.name)
    if len(combos) != 1:
        return None
    (accelerator, counts), = combos.items()
    return (accelerator, counts[0]) if len(counts) == 1 else None


def attachable_gpus() -> list[str]:
    """The GPUs an n1 machine takes (chosen in the accelerator menu), in catalogue order."""
    found: dict[str, None] = {}
    for machine in serving_machines():
        if machine.accelerators == "optional":
            found.update(dict.fromkeys(allowed_accelerators(machine.name)))
    return list(found)


def hourly(machine_type: str, accelerator_type: str, accelerator_count: int,
           where: str | None = None) -> Price:
    """One replica's price per hour in `where` (the endpoints' region by default)."""
    where = where or region()
    table = default_table()
    machine = get_machine_type(machine_type)
    if machine is None:
        return Price(None, missing=f"unknown machine type {machine_type!r}")
    row = table.price("machine", machine.name, where)
    if row is None:
        return Price(None, missing=f"the price table has no price for {machine.name} in {where}")
    rows, micros = [row], usd_to_micros(row.on_demand)
    # An n1 machine's GPUs are billed per GPU; an a2/a3/g2 machine's rate includes them.
    if machine.accelerators == "optional" and accelerator_type and accelerator_count:
        gpu = table.price("accelerator", accelerator_type, where)
        if gpu is None:
            return Price(None, missing=f"the price table has no price for {accelerator_type} "
                                       f"in {where}")
        rows.append(gpu)
        micros += usd_to_micros(gpu.on_demand) * accelerator_count
    return Price(micros, tuple(rows))


def gpu_hourly(accelerator_type: str, where: str | None = None) -> int | None:
    """One GPU of an n1 machine, micro-dollars per hour; None where the table has no price."""
    row = default_table().price("accelerator", accelerator_type, where or region())
    return None if row is None else usd_to_micros(row.on_demand)


def usd_per_hour(micros: int | None) -> str:
    return "no price" if micros is None else f"{display_usd(micros)}/h"


def machine_label(machine: MachineType, price: Price) -> str:
    """'g2-standard-8: 1 x NVIDIA_L4, 8 vCPU, 32 GB, $0.98/h'."""
    parts = []
    gpus = built_in_gpus(machine)
    if gpus is not None:
        parts.append(f"{gpus[1]} x {gpus[0]}")
    if machine.vcpus:
        parts.append(f"{machine.vcpus} vCPU")
    if machine.memory_gb:
        parts.append(f"{machine.memory_gb:g} GB")
    suffix = " + GPUs" if machine.accelerators == "optional" else ""
    return f"{machine.name}: {', '.join(parts)}, {usd_per_hour(price.micros)}{suffix}"


def machine_refusal(machine_type: str) -> str:
    """Why no model can be served on `machine_type`, or "" when a model can."""
    machine = get_machine_type(machine_type)
    if machine is not None and machine.kind in SERVING_KINDS:
        return ""
    kind = "a TPU machine" if machine is not None else "not a machine type of the catalogue"
    return (f"{machine_type} is {kind}: models are served on the menu's CPU and NVIDIA GPU "
            f"machines (e.g. n1-standard-4, g2-standard-8)")


def runtime_refusal(entry: ModelEntry, machine_type: str, accelerator_type: str) -> str:
    """Why `entry`'s runtime cannot run on this machine, naming the valid ones; "" when it
    can. Every runtime runs on the menu's machines; tensorrt only where its engine's GPU is."""
    if refusal := machine_refusal(machine_type):
        return refusal
    if entry.runtime != ModelEntry.Runtime.TENSORRT:
        return ""
    gpu = entry.engine_accelerator or TENSORRT_DEFAULT_GPU
    if gpu in allowed_accelerators(machine_type) and accelerator_type in ("", gpu):
        return ""
    valid = ", ".join(m.name for m in serving_machines() if gpu in allowed_accelerators(m.name))
    with_gpu = f" with {accelerator_type}" if accelerator_type else ""
    return (f"model {entry.display_name} is a TensorRT engine built on {gpu}: it runs only "
            f"on a machine with {gpu} ({valid}), not on {machine_type}{with_gpu}")


def price_text(price: Price | None, resources: Mapping[str, Any]) -> str:
    """' on 2 x g2-standard-8 with 1 x NVIDIA_L4: $1.96/h at 2 replicas, up to $4.90/h at 5
    (prices read 2026-07-30)', for the message that confirms a deploy."""
    low = int(resources.get("min_replicas") or 1)
    high = max(low, int(resources.get("max_replicas") or low))
    gpus = (f" with {resources.get('accelerator_count')} x {resources['accelerator_type']}"
            if resources.get("accelerator_type") else "")
    text = f" on {low} x {resources.get('machine_type')}{gpus}"
    if price is None or price.micros is None:
        return f"{text} (no price: {price.missing if price else 'not priced'})"
    upper = f", up to {usd_per_hour(price.for_replicas(high))} at {high}" if high > low else ""
    return (f"{text}: {usd_per_hour(price.for_replicas(low))} at {low} "
            f"replica{'s' * (low != 1)}{upper} (prices read {price.retrieved})")


def table_provenance() -> str:
    """Where the menu's prices come from and when they were read, for the page."""
    table = default_table()
    return (f"Vertex custom-training rates in {region()} per node hour (the table holds no "
            f"prediction rates of its own) from the {table.source}, read "
            f"{table.oldest_retrieved} to {table.newest_retrieved}")
