"""The price table: loading the CSV and looking prices up.

The shipped file ``data/vertex_training_prices.csv`` is a copy of the shared price data, every
figure with its source and retrieval date. A refresh from the Cloud Billing Catalog API builds a
new ``PriceTable`` from rows of the same shape, with its own ``source``; nothing else changes.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from importlib import resources
from types import MappingProxyType

from vertexplan.catalog import get_accelerator
from vertexplan.pricing.parse import (
    FeeBasis,
    parse_fee_name,
    parse_tpu_name,
    retrieved_dates,
    split_name,
)
from vertexplan.pricing.rows import KINDS, Fee, Kind, PriceRow, TpuPrice

DATA_FILE = "vertex_training_prices.csv"
SHIPPED_SOURCE = (
    "price table shipped with the control plane"
    " (vertexplan/pricing/data/vertex_training_prices.csv;"
    " each figure CONFIRMED, PAGE VALUE or DERIVED as its row says)"
)
# The folders the shipped table has lived in, old -> now. A price snapshot stored before a move
# keeps the source it was priced from, so reading one cites the table where it is now.
MOVED_PATHS = (("jobs/pricing/data/", "vertexplan/pricing/data/"),)
COLUMNS = ("kind", "name", "region", "unit", "on_demand_usd", "spot_usd", "source", "retrieved")
# The unit each kind of row is quoted in.
_UNITS = {
    "machine": "hour",
    "accelerator": "hour",
    "management_fee": "hour",
    "tpu": "chip_hour",
    "disk": "gb_month",
}


class PriceTableError(RuntimeError):
    """The price data is malformed: an editing or refresh mistake, never a user's."""


class PriceTable:
    """Prices by (kind, key, region), with TPU chip prices by machine type and management fees.

    Immutable after construction; share one instance (``default_table()``) across a process.
    """

    def __init__(self, rows: Iterable[PriceRow], source: str) -> None:
        self.source = source
        self.rows: tuple[PriceRow, ...] = tuple(rows)
        by_key: dict[tuple[str, str, str], PriceRow] = {}
        tpus: dict[tuple[str, str], TpuPrice] = {}
        fees: dict[tuple[str, str, str], Fee] = {}
        for row in self.rows:
            where = f"{row.kind} {row.name!r} in {row.region}"
            if (row.kind, row.key, row.region) in by_key:
                raise PriceTableError(f"{where}: listed twice")
            by_key[(row.kind, row.key, row.region)] = row
            if row.kind == "tpu":
                tpu = _tpu_price(row)
                for machine in tpu.machine_types:
                    if (machine, row.region) in tpus:
                        raise PriceTableError(f"{where}: {machine} already has a chip price")
                    tpus[(machine, row.region)] = tpu
            elif row.kind == "management_fee":
                fee = _fee(row)
                fees[(fee.basis, fee.subject, row.region)] = fee
        self._by_key = MappingProxyType(by_key)
        self._tpus = MappingProxyType(tpus)
        self._fees = MappingProxyType(fees)

    def __repr__(self) -> str:
        return f"<PriceTable {len(self.rows)} rows, {self.source!r}>"

    # -- lookups ---------------------------------------------------------------------------

    def get(self, kind: Kind, name: str, region: str) -> PriceRow | None:
        """The row for a resource in a region, priced or not; ``name`` is the key
        (``TPU_V5_LITEPOD``) or the name column as written."""
        key = split_name(name)[0] if "(" in name else name
        return self._by_key.get((kind, key, region))

    def price(self, kind: Kind, name: str, region: str) -> PriceRow | None:
        """The row only when it has an on-demand figure."""
        row = self.get(kind, name, region)
        return row if row is not None and row.priced else None

    def regions_priced(self, kind: Kind, name: str) -> tuple[str, ...]:
        """Regions where the resource has an on-demand price, sorted."""
        key = split_name(name)[0] if "(" in name else name
        return tuple(
            sorted(r.region for r in self.rows if r.kind == kind and r.key == key and r.priced)
        )

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(sorted({row.region for row in self.rows}))

    def unpriced(self) -> tuple[PriceRow, ...]:
        """Rows saying a resource exists in a region whose price is not known."""
        return tuple(row for row in self.rows if not row.priced)

    def tpu_price(self, machine_type: str, region: str) -> TpuPrice | None:
        """The per-chip price of a TPU machine type (ct5lp-hightpu-4t) in a region."""
        return self._tpus.get((machine_type, region))

    def tpu_regions_priced(self, machine_type: str) -> tuple[str, ...]:
        return tuple(
            sorted(r for (m, r), tpu in self._tpus.items() if m == machine_type and tpu.row.priced)
        )

    def management_fee(self, basis: FeeBasis, subject: str, region: str) -> Fee | None:
        """The fee per GPU of an AcceleratorType, or per vCPU / GB of a machine family."""
        return self._fees.get((basis, subject, region))

    def management_fees(self, region: str) -> tuple[Fee, ...]:
        return tuple(fee for (_, _, r), fee in self._fees.items() if r == region)

    # -- provenance ------------------------------------------------------------------------

    @property
    def oldest_retrieved(self) -> str | None:
        """The earliest retrieval date of a priced row (a partial date such as '2026-09'
        sorts before the days of its month)."""
        dates = [d for row in self.rows if row.priced for d in row.dates]
        return min(dates) if dates else None

    @property
    def newest_retrieved(self) -> str | None:
        dates = [d for row in self.rows if row.priced for d in row.dates]
        return max(dates) if dates else None

    def undated(self) -> tuple[PriceRow, ...]:
        """Priced rows whose retrieved cell holds no date (e.g. a catalogue commit)."""
        return tuple(row for row in self.rows if row.priced and not row.dates)


def _tpu_price(row: PriceRow) -> TpuPrice:
    try:
        name = parse_tpu_name(row.name)
    except ValueError as exc:
        raise PriceTableError(str(exc)) from None
    # TPU_V6E and TPU_V5P are the table's names; Vertex has no AcceleratorType for them.
    accelerator = get_accelerator(name.key)
    is_enum = accelerator is not None and accelerator.kind == "tpu"
    return TpuPrice(
        row=row,
        generation=name.generation,
        machine_types=name.machine_types,
        accelerator_type=name.key if is_enum else None,
    )


def _fee(row: PriceRow) -> Fee:
    try:
        name = parse_fee_name(row.name)
    except ValueError as exc:
        raise PriceTableError(str(exc)) from None
    return Fee(row=row, basis=name.basis, subject=name.subject)


# -- loading ---------------------------------------------------------------------------------


def _decimal(text: str, where: str) -> Decimal | None:
    if not text.strip():
        return None
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise PriceTableError(f"{where}: {text!r} is not a decimal number") from None
    if not value.is_finite() or value < 0:
        raise PriceTableError(f"{where}: {text!r} is not a price")
    return value


def parse_row(raw: dict[str, str], where: str) -> PriceRow:
    """One CSV row as a PriceRow; PriceTableError says what is wrong with it."""
    kind = raw["kind"]
    if kind not in KINDS:
        raise PriceTableError(f"{where}: unknown kind {kind!r}")
    if raw["unit"] != _UNITS[kind]:
        raise PriceTableError(f"{where}: a {kind} price is per {_UNITS[kind]}, not {raw['unit']!r}")
    try:
        key = split_name(raw["name"])[0]
    except ValueError as exc:
        raise PriceTableError(f"{where}: {exc}") from None
    on_demand = _decimal(raw["on_demand_usd"], f"{where} on_demand_usd")
    spot = _decimal(raw["spot_usd"], f"{where} spot_usd")
    if on_demand is not None and not raw["source"].strip():
        raise PriceTableError(f"{where}: a price needs its source")
    if spot is not None and on_demand is None:
        raise PriceTableError(f"{where}: a spot price without an on-demand price")
    return PriceRow(
        kind=kind,  # type: ignore[arg-type]  # checked against KINDS above
        key=key,
        name=raw["name"],
        region=raw["region"],
        unit=raw["unit"],  # type: ignore[arg-type]  # checked against _UNITS above
        on_demand=on_demand,
        spot=spot,
        source=raw["source"],
        retrieved=raw["retrieved"],
        dates=retrieved_dates(raw["retrieved"]),
    )


def cited_now(source: str) -> str:
    """A stored price source with the shipped table's paths as they are now."""
    for old, new in MOVED_PATHS:
        source = source.replace(old, new)
    return source


def load_table(text: str | None = None, source: str = SHIPPED_SOURCE) -> PriceTable:
    """A PriceTable from CSV text (the shipped file when None)."""
    if text is None:
        text = resources.files(__package__).joinpath("data", DATA_FILE).read_text("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise PriceTableError(f"columns {reader.fieldnames} differ from {list(COLUMNS)}")
    rows = [parse_row(raw, f"{DATA_FILE} line {reader.line_num}") for raw in reader]
    return PriceTable(rows, source)


@functools.cache
def default_table() -> PriceTable:
    """The shipped table, read once per process."""
    return load_table()
