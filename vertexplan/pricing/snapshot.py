"""The price snapshot a job stores at submission, and reading it back.

A job's actual cost is computed from its own snapshot, never from the current table, so a later
refresh of the prices does not change what a past job cost. The snapshot is plain JSON: rates
are integers (micro-dollars per hour) and unit prices decimal strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from vertexplan.pricing.estimate import (
    RATE_NAMES,
    STRATEGY_RATES,
    Estimate,
    LineItem,
    Totals,
    UnitPrices,
)
from vertexplan.pricing.table import cited_now

SNAPSHOT_FORMAT = 1


class SnapshotError(ValueError):
    """A stored snapshot that cannot be read back (corrupted, or from an unknown format)."""


def snapshot(estimate: Estimate) -> dict[str, Any]:
    """A JSON-serialisable record of every rate the estimate used, with sources and dates."""
    retrieved = estimate.retrieved
    return {
        "format": SNAPSHOT_FORMAT,
        "currency": "USD",
        "money": "integer micro-dollars per hour (1 USD = 1000000)",
        "region": estimate.region,
        "strategy": estimate.strategy,
        "rate": estimate.rate_name,
        "hourly": _totals_json(estimate.hourly),
        "table": {
            "source": estimate.table_source,
            "retrieved": list(retrieved) if retrieved else None,
        },
        "lines": [_line_json(line) for line in estimate.lines],
        "notes": list(estimate.notes),
    }


def restore(data: Mapping[str, Any]) -> Estimate:
    """The Estimate a snapshot was made from; SnapshotError if it does not add up."""
    if not isinstance(data, Mapping) or data.get("format") != SNAPSHOT_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise SnapshotError(f"not a price snapshot of format {SNAPSHOT_FORMAT} (got {found!r})")
    try:
        estimate = Estimate(
            region=_str(data["region"]),
            strategy=_str(data["strategy"]),
            lines=tuple(_line(item) for item in data["lines"]),
            notes=tuple(_str(note) for note in data["notes"]),
            table_source=cited_now(_str(data["table"]["source"])),
        )
    except (KeyError, TypeError) as exc:
        raise SnapshotError(f"malformed price snapshot: {exc!r}") from None
    if estimate.strategy not in STRATEGY_RATES:
        raise SnapshotError(f"unknown strategy {estimate.strategy!r} in price snapshot")
    # The stored totals are what the UI showed at submission; a mismatch means the record was
    # edited or damaged, and billing from it would be wrong either way.
    if _totals(data["hourly"]) != estimate.hourly:
        raise SnapshotError("price snapshot totals differ from the sum of its line items")
    return estimate


def _totals_json(totals: Totals) -> dict[str, int | None]:
    return {rate: totals.get(rate) for rate in RATE_NAMES}


def _line_json(line: LineItem) -> dict[str, Any]:
    prices = line.unit_prices
    return {
        "pool": line.pool,
        "role": line.role,
        "resource": line.resource,
        "name": line.name,
        "quantity": line.quantity,
        "unit": line.unit,
        "unit_prices": {
            rate: None if value is None else format(value, "f")
            for rate, value in (
                ("on_demand", prices.on_demand),
                ("spot", prices.spot),
                ("flex", prices.flex),
            )
        },
        "hourly": _totals_json(line.hourly),
        "source": line.source,
        "retrieved": line.retrieved,
    }


def _line(item: Mapping[str, Any]) -> LineItem:
    prices = item["unit_prices"]
    on_demand = _decimal(prices["on_demand"])
    if on_demand is None:
        raise SnapshotError(f"line {item.get('name')!r} has no on-demand price")
    return LineItem(
        pool=_int(item["pool"]),
        role=_str(item["role"]),
        resource=_str(item["resource"]),  # type: ignore[arg-type]
        name=_str(item["name"]),
        quantity=_int(item["quantity"]),
        unit=_str(item["unit"]),
        unit_prices=UnitPrices(on_demand, _decimal(prices["spot"]), _decimal(prices["flex"])),
        hourly=_totals(item["hourly"]),
        source=_str(item["source"]),
        retrieved=_str(item["retrieved"]),
    )


def _totals(data: Mapping[str, Any]) -> Totals:
    spot, flex = data["spot"], data["flex"]
    return Totals(
        _int(data["on_demand"]),
        None if spot is None else _int(spot),
        None if flex is None else _int(flex),
    )


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SnapshotError(f"expected a non-negative integer, got {value!r}")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise SnapshotError(f"expected a string, got {value!r}")
    return value


def _decimal(value: object) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(_str(value))
    except InvalidOperation:
        raise SnapshotError(f"not a decimal price: {value!r}") from None
