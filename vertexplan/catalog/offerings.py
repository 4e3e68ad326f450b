"""Which accelerators and TPU generations Vertex offers for training in each region.

``data/region_offerings.csv`` has one row per (region, offering) with its source and date: an
offering is an AcceleratorType name (NVIDIA_H100_80GB), a TPU generation (tpu-v5e) or ``cpu``.
A region with rows is checked; a region without any is not in the table, and nothing is said
about it (Google adds regions over time; a guess would refuse valid jobs).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from vertexplan.catalog.loader import read_rows


@dataclass(frozen=True)
class Offering:
    region: str
    offering: str
    note: str
    source: str
    retrieved: str


@functools.cache
def _table() -> dict[str, dict[str, Offering]]:
    table: dict[str, dict[str, Offering]] = {}
    for row in read_rows("region_offerings.csv"):
        table.setdefault(row["region"], {})[row["offering"]] = Offering(**row)
    return table


def tpu_offering(generation: str) -> str:
    """'v5e' -> 'tpu-v5e', as the table names TPU generations."""
    return f"tpu-{generation}"


def known_region(region: str) -> bool:
    return region in _table()


def offered(region: str, offering: str) -> bool | None:
    """True or False for a region in the table, None for a region it does not cover."""
    rows = _table().get(region)
    if rows is None:
        return None
    return offering in rows


def regions_offering(offering: str) -> tuple[str, ...]:
    return tuple(sorted(r for r, rows in _table().items() if offering in rows))


def provenance(region: str) -> str:
    """'source, read date' of the region's rows, for messages."""
    rows = _table().get(region) or {}
    dates = sorted({o.retrieved for o in rows.values()})
    return f"region catalogue read {', '.join(dates)}" if dates else "region catalogue"


def regions_with_offerings() -> tuple[str, ...]:
    """Every region the catalogue covers, in the order its data file lists them."""
    return tuple(_table())
