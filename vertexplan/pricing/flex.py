"""FLEX_START (Dynamic Workload Scheduler) rates, apart from on-demand and spot.

Vertex bills a FLEX_START VM at Compute Engine's DWS rate plus a management fee of 15% of the
Compute Engine on-demand price (prices/README.md). Google's DWS discount is "up to 53%"
(VERTEX_FACTS.md A7), but a per-SKU Vertex training rate has not been read anywhere this
project could cite, so ``data/flex_rates.csv`` ships with its header only and grows row by row
as rates are read (each with its source and date). A resource without a row has no FLEX_START
price: the estimate says so instead of showing the on-demand figure as if it were the flex one.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources

COLUMNS = ("kind", "name", "region", "unit", "flex_usd", "source", "retrieved")
DISCOUNT_NOTE = ("Google publishes DWS flex-start discounts of up to 53% "
                 "(cloud.google.com/kubernetes-engine/docs/concepts/dws) but no per-resource "
                 "Vertex training rate was found")


@dataclass(frozen=True)
class FlexRate:
    kind: str
    name: str
    region: str
    unit: str
    flex_usd: Decimal
    source: str
    retrieved: str


class FlexRates:
    """FLEX_START rates by (kind, name, region)."""

    def __init__(self, rates: Iterable[FlexRate] = ()) -> None:
        self._rates = {(r.kind, r.name, r.region): r for r in rates}

    def get(self, kind: str, name: str, region: str) -> FlexRate | None:
        return self._rates.get((kind, name, region))

    def __len__(self) -> int:
        return len(self._rates)


def parse(text: str) -> FlexRates:
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"flex rates: columns {reader.fieldnames}, expected {list(COLUMNS)}")
    rates = []
    for line, row in enumerate(reader, start=2):
        if not row["source"] or not row["retrieved"]:
            raise ValueError(f"flex rates line {line}: every rate needs source and retrieved")
        rates.append(FlexRate(row["kind"], row["name"], row["region"], row["unit"],
                              Decimal(row["flex_usd"]), row["source"], row["retrieved"]))
    return FlexRates(rates)


@functools.cache
def shipped() -> FlexRates:
    return parse(resources.files("vertexplan.pricing").joinpath("data", "flex_rates.csv")
                 .read_text("utf-8"))
