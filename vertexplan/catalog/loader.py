"""Reads the catalogue CSVs once, on first use, and checks that they agree with each other.

The files are data, not code, so that a refresh (a new retrieval from Google's pages) is a
reviewable diff with its ``source`` and ``retrieved`` columns. Each file's header is checked
against the columns this module expects: a renamed or missing column fails loudly at load time
instead of turning into silently empty values.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterator, Mapping
from importlib import resources
from types import MappingProxyType

from vertexplan.catalog.records import (
    Accelerator,
    BootDiskType,
    Catalog,
    MachineType,
    Region,
    TpuMachine,
    TpuTopology,
)

# Bumped when a file's columns change; data refreshes keep it.
CATALOG_FORMAT = 1

_COLUMNS: dict[str, tuple[str, ...]] = {
    "prediction_images.csv": ("uri", "framework", "accelerator", "note", "source", "retrieved"),
    "machine_types.csv": (
        "name",
        "family",
        "series",
        "kind",
        "accelerators",
        "vcpus",
        "memory_gb",
        "note",
        "source",
        "retrieved",
    ),
    "accelerators.csv": (
        "name",
        "number",
        "kind",
        "memory_gb",
        "deprecated",
        "display_name",
        "note",
        "source",
        "retrieved",
    ),
    "accelerator_combinations.csv": (
        "machine_type",
        "accelerator_type",
        "accelerator_count",
        "source",
        "retrieved",
    ),
    "tpu_machines.csv": (
        "machine_type",
        "generation",
        "accelerator_type",
        "chips_per_vm",
        "hbm_gb_per_chip",
        "note",
        "source",
        "retrieved",
    ),
    "tpu_topologies.csv": ("machine_type", "topology", "chips", "vms", "source", "retrieved"),
    "regions.csv": (
        "region",
        "location",
        "multi_region",
        "reduction_server_image",
        "note",
        "source",
        "retrieved",
    ),
    "region_offerings.csv": ("region", "offering", "note", "source", "retrieved"),
    "boot_disk_types.csv": (
        "name",
        "allowed",
        "display_name",
        "refusal",
        "min_gb",
        "max_gb",
        "source",
        "retrieved",
    ),
}


class CatalogError(RuntimeError):
    """The shipped data is inconsistent: a packaging or editing mistake, never user input."""


def read_rows(filename: str, text: str | None = None) -> Iterator[dict[str, str]]:
    """Rows of one data file as dicts; ``text`` replaces the shipped file (for tests)."""
    if text is None:
        text = resources.files(__package__).joinpath("data", filename).read_text("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    expected = _COLUMNS[filename]
    if tuple(reader.fieldnames or ()) != expected:
        raise CatalogError(
            f"{filename}: columns {reader.fieldnames} differ from the expected {list(expected)}"
        )
    for line, row in enumerate(reader, start=2):
        if not row.get("source") or not row.get("retrieved"):
            raise CatalogError(f"{filename} line {line}: every row needs source and retrieved")
        yield row


def _int_or_none(value: str) -> int | None:
    return int(value) if value else None


def _float_or_none(value: str) -> float | None:
    return float(value) if value else None


def _yes(value: str, where: str) -> bool:
    if value not in ("yes", "no"):
        raise CatalogError(f"{where}: expected yes or no, got {value!r}")
    return value == "yes"


Rows = Callable[[str], Iterator[dict[str, str]]]


def build_catalog(texts: dict[str, str] | None = None) -> Catalog:
    """Parse and cross-check every file; ``texts`` maps file names to replacement contents."""
    texts = texts or {}

    def rows(name: str) -> Iterator[dict[str, str]]:
        return read_rows(name, texts.get(name))

    machines = _machines(rows)
    accelerators = _accelerators(rows)
    combinations = _combinations(rows, machines, accelerators)
    tpu_machines = _tpu_machines(rows)
    _check_machines(machines, combinations, tpu_machines)
    regions = _regions(rows)
    disks = _boot_disk_types(rows)
    return Catalog(
        machines=MappingProxyType(machines),
        accelerators=MappingProxyType(accelerators),
        combinations=MappingProxyType(combinations),
        tpu_machines=MappingProxyType(tpu_machines),
        regions=MappingProxyType(regions),
        boot_disk_types=MappingProxyType(disks),
        accelerators_by_number=MappingProxyType({a.number: a.name for a in accelerators.values()}),
    )


def _machines(rows: Rows) -> dict[str, MachineType]:
    machines = {
        r["name"]: MachineType(
            name=r["name"],
            family=r["family"],
            series=r["series"],
            kind=r["kind"],  # type: ignore[arg-type]
            accelerators=r["accelerators"],  # type: ignore[arg-type]
            vcpus=_int_or_none(r["vcpus"]),
            memory_gb=_float_or_none(r["memory_gb"]),
            note=r["note"],
            source=r["source"],
            retrieved=r["retrieved"],
        )
        for r in rows("machine_types.csv")
    }
    for m in machines.values():
        if m.kind not in ("cpu", "gpu", "tpu"):
            raise CatalogError(f"machine {m.name}: unknown kind {m.kind!r}")
        if m.accelerators not in ("none", "optional", "required", "implied"):
            raise CatalogError(f"machine {m.name}: unknown accelerators {m.accelerators!r}")
    return machines


def _accelerators(rows: Rows) -> dict[str, Accelerator]:
    return {
        r["name"]: Accelerator(
            name=r["name"],
            number=int(r["number"]),
            kind=r["kind"],  # type: ignore[arg-type]
            memory_gb=float(r["memory_gb"]),
            deprecated=_yes(r["deprecated"], f"accelerator {r['name']}"),
            display_name=r["display_name"],
            note=r["note"],
            source=r["source"],
            retrieved=r["retrieved"],
        )
        for r in rows("accelerators.csv")
    }


def _combinations(
    rows: Rows, machines: dict[str, MachineType], accelerators: dict[str, Accelerator]
) -> dict[str, MappingProxyType[str, tuple[int, ...]]]:
    """The accelerator counts each machine takes of each accelerator."""
    counts: dict[str, dict[str, set[int]]] = {}
    for r in rows("accelerator_combinations.csv"):
        machine, acc = r["machine_type"], r["accelerator_type"]
        if machine not in machines:
            raise CatalogError(f"combination names unknown machine type {machine!r}")
        if acc not in accelerators:
            raise CatalogError(f"combination names unknown accelerator type {acc!r}")
        counts.setdefault(machine, {}).setdefault(acc, set()).add(int(r["accelerator_count"]))
    return {
        machine: MappingProxyType({acc: tuple(sorted(ns)) for acc, ns in by_acc.items()})
        for machine, by_acc in counts.items()
    }


def _tpu_machines(rows: Rows) -> dict[str, TpuMachine]:
    """The TPU machines, each with its topologies (read first, from their own file)."""
    topologies: dict[str, list[TpuTopology]] = {}
    for r in rows("tpu_topologies.csv"):
        topo = TpuTopology(
            machine_type=r["machine_type"],
            topology=r["topology"],
            chips=int(r["chips"]),
            vms=int(r["vms"]),
            source=r["source"],
            retrieved=r["retrieved"],
        )
        topologies.setdefault(topo.machine_type, []).append(topo)
    tpu_machines = {}
    for r in rows("tpu_machines.csv"):
        name = r["machine_type"]
        tpu = TpuMachine(
            machine_type=name,
            generation=r["generation"],
            accelerator_type=r["accelerator_type"] or None,
            chips_per_vm=int(r["chips_per_vm"]),
            hbm_gb_per_chip=float(r["hbm_gb_per_chip"]),
            note=r["note"],
            source=r["source"],
            retrieved=r["retrieved"],
            topologies=tuple(topologies.pop(name, ())),
        )
        if not tpu.topologies:
            raise CatalogError(f"TPU machine {name} has no topologies")
        for topo in tpu.topologies:
            if topo.chips != topo.vms * tpu.chips_per_vm:
                raise CatalogError(f"{name} {topo.topology}: chips != vms x chips per VM")
        tpu_machines[name] = tpu
    if topologies:
        raise CatalogError(f"topologies for machines without a tpu_machines row: {set(topologies)}")
    return tpu_machines


def _check_machines(
    machines: dict[str, MachineType],
    combinations: Mapping[str, object],
    tpu_machines: dict[str, TpuMachine],
) -> None:
    """Each machine's accelerators column agrees with the combinations and TPU files."""
    for name, m in machines.items():
        if m.accelerators == "implied" and name not in tpu_machines:
            raise CatalogError(f"machine {name} needs a tpu_machines row")
        if m.accelerators in ("optional", "required") and name not in combinations:
            raise CatalogError(f"machine {name} takes accelerators but has no combinations")
        if m.accelerators == "none" and name in combinations:
            raise CatalogError(f"machine {name} takes no accelerators but has combinations")


def _regions(rows: Rows) -> dict[str, Region]:
    return {
        r["region"]: Region(
            name=r["region"],
            location=r["location"],
            multi_region=r["multi_region"],
            reduction_server_image=r["reduction_server_image"],
            note=r["note"],
            source=r["source"],
            retrieved=r["retrieved"],
        )
        for r in rows("regions.csv")
    }


def _boot_disk_types(rows: Rows) -> dict[str, BootDiskType]:
    return {
        r["name"]: BootDiskType(
            name=r["name"],
            allowed=_yes(r["allowed"], f"disk {r['name']}"),
            display_name=r["display_name"],
            refusal=r["refusal"],
            min_gb=int(r["min_gb"]),
            max_gb=int(r["max_gb"]),
            source=r["source"],
            retrieved=r["retrieved"],
        )
        for r in rows("boot_disk_types.csv")
    }


@functools.cache
def get_catalog() -> Catalog:
    """The shipped catalogue, read on first call and kept for the life of the process."""
    return build_catalog()
