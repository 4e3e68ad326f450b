"""Typed, immutable rows of the price table."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from vertexplan.pricing.parse import FeeBasis

Kind = Literal["machine", "accelerator", "tpu", "disk", "management_fee"]
Unit = Literal["hour", "chip_hour", "gb_month"]

KINDS: tuple[Kind, ...] = ("machine", "accelerator", "tpu", "disk", "management_fee")
# Hours in one unit of time the price is quoted for: a month is 730 hours (prices README).
HOURS_PER_UNIT: dict[str, int] = {"hour": 1, "chip_hour": 1, "gb_month": 730}


@dataclass(frozen=True)
class PriceRow:
    """One priced resource in one region, as published, with where and when it was read.

    ``on_demand`` and ``spot`` are USD per ``unit``; None where the table has no figure (a row
    can record that a resource exists in a region without a known price).
    """

    kind: Kind
    key: str  # the lookup name: n1-standard-8, NVIDIA_TESLA_T4, TPU_V5_LITEPOD, pd-ssd
    name: str  # the name column as written, note included
    region: str
    unit: Unit
    on_demand: Decimal | None
    spot: Decimal | None
    source: str
    retrieved: str  # as written: a date, a month, a commit, or several of them
    dates: tuple[str, ...]  # the ISO dates (or months, years) found in ``retrieved``

    @property
    def priced(self) -> bool:
        return self.on_demand is not None

    @property
    def hours_per_unit(self) -> int:
        return HOURS_PER_UNIT[self.unit]


@dataclass(frozen=True)
class TpuPrice:
    """A per-chip TPU price and the Vertex machine types whose chips it prices."""

    row: PriceRow
    generation: str
    machine_types: tuple[str, ...]
    accelerator_type: str | None  # the Vertex AcceleratorType, where Vertex has one (v5e)


@dataclass(frozen=True)
class Fee:
    """Vertex's management fee on one unit of a resource (15% of its Compute Engine on-demand
    price), billed with Compute Engine's spot, reservation and DWS FLEX_START rates."""

    row: PriceRow
    basis: FeeBasis  # per gpu, per vcpu or per gb of memory
    subject: str  # the AcceleratorType (per gpu) or the machine family (a3, n1)

    @property
    def usd_per_hour(self) -> Decimal | None:
        return self.row.on_demand
