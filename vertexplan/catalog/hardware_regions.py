"""Which regions offer a job's hardware: what a region menu lists and what a region check reads.

A machine needs one *offering* of ``data/region_offerings.csv`` in its region: its accelerator
type (NVIDIA_L4), its TPU generation (tpu-v5e), or ``cpu`` (any region with custom training).
A job needs the offerings of all its pools, and the regions that offer every one are listed in
the data file's order, so a menu built from them reads the same every time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vertexplan.catalog.lookups import (
    ACCELERATOR_UNSPECIFIED,
    accelerator_name,
    get_machine_type,
    get_tpu_machine,
)
from vertexplan.catalog.offerings import (
    offered,
    regions_with_offerings,
    tpu_offering,
)
from vertexplan.catalog.view import build_view

CPU = "cpu"
# cloud-tpu machines name their generation through acceleratorType.
CLOUD_TPU_GENERATIONS = {"TPU_V2": "v2", "TPU_V3": "v3"}


def machine_offering(machine_type: str, accelerator_type: Any = None) -> str | None:
    """The offering a machine with ``accelerator_type`` (a name, an enum number, or nothing)
    needs in its region; None for a machine or TPU the catalogue does not know."""
    machine = get_machine_type(machine_type)
    if machine is None:
        return None
    accelerator = accelerator_name(accelerator_type) if accelerator_type else None
    if accelerator == ACCELERATOR_UNSPECIFIED:
        accelerator = None
    if machine.is_tpu:
        tpu = get_tpu_machine(machine.name)
        generation = tpu.generation if tpu is not None else CLOUD_TPU_GENERATIONS.get(
            accelerator or "")
        return tpu_offering(generation) if generation else None
    return accelerator or CPU


def job_offerings(custom_job: Any) -> tuple[str, ...]:
    """The offerings a CustomJob's pools need, each once, in pool order."""
    found: dict[str, None] = {}
    for pool in build_view(custom_job).active_pools:
        name = pool.machine_type.value
        if isinstance(name, str):
            offering = machine_offering(name, pool.accelerator_type.value)
            if offering is not None:
                found[offering] = None
    return tuple(found)


def regions_offering_all(offerings: Iterable[str]) -> tuple[str, ...]:
    """The regions the table says offer every one of ``offerings`` (any region of the table
    when there are none), in the data file's order."""
    wanted = tuple(offerings)
    return tuple(r for r in regions_with_offerings()
                 if all(offered(r, o) for o in wanted))


def missing_in(region: str, offerings: Iterable[str]) -> tuple[str, ...]:
    """Those of ``offerings`` the table says ``region`` lacks (none for a region it does not
    cover: nothing is known there)."""
    return tuple(o for o in offerings if offered(region, o) is False)


def offering_label(offering: str) -> str:
    """'tpu-v5e' -> 'TPU v5e', 'cpu' -> 'CPU machines'; an accelerator keeps its name."""
    if offering == CPU:
        return "CPU machines"
    if offering.startswith("tpu-"):
        return f"TPU {offering.removeprefix('tpu-')}"
    return offering
