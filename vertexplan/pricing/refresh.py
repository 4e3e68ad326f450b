"""Folding Cloud Billing Catalog SKUs into the price table (pure: no network, no Django).

What is mapped, from the Vertex AI service's training SKUs (an OnDemand SKU sets the row's
on-demand price, a Preemptible one its spot price):
- a GPU SKU ("... Training ... Nvidia Tesla T4 GPU ...", per hour) -> that accelerator's row;
- the N1 "Predefined Instance Core" (per vCPU-hour) and "Predefined Instance Ram" (per
  GiB-hour) SKUs -> every n1-* machine row of the region: vCPUs x core + GB x RAM.
Every other row keeps its figure, source and date; a row that changes says which SKUs it came
from and the date it was read. Nothing is written unless at least one row maps.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Protocol

from vertexplan.catalog import get_machine_type
from vertexplan.pricing.rows import PriceRow
from vertexplan.pricing.table import COLUMNS

CATALOG_SOURCE = "Cloud Billing Catalog API"

_GPUS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name) for pattern, name in (
        (r"\btesla t4\b", "NVIDIA_TESLA_T4"),
        (r"\btesla p4\b", "NVIDIA_TESLA_P4"),
        (r"\btesla p100\b", "NVIDIA_TESLA_P100"),
        (r"\btesla v100\b", "NVIDIA_TESLA_V100"),
        (r"\ba100 80gb\b", "NVIDIA_A100_80GB"),
        (r"\b(?:tesla )?a100\b(?! 80gb)", "NVIDIA_TESLA_A100"),
        (r"\bl4\b", "NVIDIA_L4"),
    )
)
_N1_CORE = re.compile(r"\bn1 predefined instance core\b", re.IGNORECASE)
_N1_RAM = re.compile(r"\bn1 predefined instance ram\b", re.IGNORECASE)
_RATES = {"OnDemand": "on_demand", "Preemptible": "spot"}


class Sku(Protocol):
    sku_id: str
    description: str
    usage_type: str
    regions: tuple[str, ...]
    usage_unit: str
    usd: Decimal


class RefreshError(ValueError):
    """The SKUs read do not give a usable table."""


@dataclass
class _Found:
    price: Decimal
    skus: list[str]


def apply(rows: Sequence[PriceRow], skus: Iterable[Sku], today: str
          ) -> tuple[list[PriceRow], list[PriceRow]]:
    """(every row, updated where a SKU maps; the rows that changed)."""
    regions = {row.region for row in rows}
    gpu: dict[tuple[str, str, str], _Found] = {}  # (accelerator, region, rate)
    n1: dict[tuple[str, str, str], _Found] = {}  # ("core" | "ram", region, rate)
    for sku in skus:
        rate = _RATES.get(sku.usage_type)
        if rate is None or "training" not in sku.description.lower():
            continue
        for region in set(sku.regions) & regions:
            if _N1_CORE.search(sku.description) and sku.usage_unit == "h":
                n1[("core", region, rate)] = _Found(sku.usd, [sku.sku_id])
            elif _N1_RAM.search(sku.description) and sku.usage_unit == "GiBy.h":
                n1[("ram", region, rate)] = _Found(sku.usd, [sku.sku_id])
            elif sku.usage_unit == "h":
                name = next((n for pattern, n in _GPUS if pattern.search(sku.description)), None)
                if name is not None:
                    gpu[(name, region, rate)] = _Found(sku.usd, [sku.sku_id])
    out: list[PriceRow] = []
    changed: list[PriceRow] = []
    for row in rows:
        prices = {rate: _price_of(row, rate, gpu, n1) for rate in ("on_demand", "spot")}
        found = {rate: f for rate, f in prices.items() if f is not None}
        if not found:
            out.append(row)
            continue
        skus_used = sorted({s for f in found.values() for s in f.skus})
        new = replace(
            row,
            on_demand=found["on_demand"].price if "on_demand" in found else row.on_demand,
            spot=found["spot"].price if "spot" in found else row.spot,
            source=f"{CATALOG_SOURCE}: Vertex AI SKU {', '.join(skus_used)}"
                   + ("" if len(found) == 2 else f" ({', '.join(found)} only; the other "
                      f"figure as before: {row.source})"),
            retrieved=today, dates=(today,))
        if new.on_demand is None and new.spot is not None:
            out.append(row)  # a spot price alone is not a row the table accepts
            continue
        out.append(new)
        changed.append(new)
    return out, changed


def _price_of(row: PriceRow, rate: str, gpu: dict[tuple[str, str, str], _Found],
              n1: dict[tuple[str, str, str], _Found]) -> _Found | None:
    if row.kind == "accelerator":
        return gpu.get((row.key, row.region, rate))
    if row.kind == "machine" and row.key.startswith("n1-"):
        core, ram = n1.get(("core", row.region, rate)), n1.get(("ram", row.region, rate))
        machine = get_machine_type(row.key)
        if core is None or ram is None or machine is None or not machine.vcpus or \
                not machine.memory_gb:
            return None
        price = core.price * machine.vcpus + ram.price * Decimal(str(machine.memory_gb))
        return _Found(price, core.skus + ram.skus)
    return None


def to_csv(rows: Iterable[PriceRow]) -> str:
    """The table's CSV, columns as the shipped file's."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([row.kind, row.name, row.region, row.unit,
                         "" if row.on_demand is None else format(row.on_demand, "f"),
                         "" if row.spot is None else format(row.spot, "f"),
                         row.source, row.retrieved])
    return buffer.getvalue()
