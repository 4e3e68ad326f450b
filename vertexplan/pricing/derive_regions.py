"""Derive Vertex training prices for every catalogue region from Compute Engine list prices.

Vertex bills custom training at the Compute Engine list price x 1.15; spot (and reservations,
FLEX_START) at Compute Engine's own rate plus a management fee of 15% of the CE on-demand price.
The local SSD bundled with A2-ultra and A3 machines is not billed by Vertex on-demand, so its CE
price is taken off those machine rows first.

The CE figures come from Cyclenerd/google-cloud-pricing-cost-calculator's ``pricing.yml`` (per
region, on-demand and spot). Only the data is read. Rows the shipped table already has are kept as
they are; a resource with no CE price in a region gets no row, so an estimate there says which
regions have prices.

Per-GPU accelerator rows and management fees come from ``derive_accelerators``, TPU chip rows
from ``derive_tpus``, when skypilot's GCP catalogue is given as well; ``derive_prices`` is the
command that runs all three.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from importlib import resources
from pathlib import Path

from vertexplan.catalog.offerings import offered, regions_with_offerings

VERTEX_FACTOR = Decimal("1.15")
FEE_RATE = Decimal("0.15")
HOURS_PER_MONTH = Decimal(730)
_PLACES = Decimal("0.00000001")
SPOT_NOTE = "fee rule from zenn DWS SKUs; CE spot varies daily"

# The catalogue offering a machine needs in a region: its GPU (A2/A3/G2 include it) or ``cpu``.
_MACHINE_OFFERING_BY_PREFIX = (
    ("a2-ultragpu-", "NVIDIA_A100_80GB"),
    ("a2-", "NVIDIA_TESLA_A100"),
    ("a3-megagpu-", "NVIDIA_H100_MEGA_80GB"),
    ("a3-highgpu-", "NVIDIA_H100_80GB"),
    ("g2-", "NVIDIA_L4"),
    ("n1-", "cpu"),
)
# Boot disk rows the table keeps -> pricing.yml storage key.
_DISK_KEYS = {"pd-ssd": "ssd", "pd-standard": "hdd", "pd-balanced": "balanced"}
_DISK_SUFFIX = {
    "pd-ssd": "",
    "pd-standard": "; valid Vertex bootDiskType",
    "pd-balanced": "",
}


@dataclass(frozen=True)
class CeSource:
    """Where the CE figures come from, as the rows cite it."""

    commit: str
    generated: str  # YYYY-MM-DD

    def cite(self) -> str:
        return (
            "[github:Cyclenerd/google-cloud-pricing-cost-calculator "
            f"pricing.yml@{self.commit} (CE list, generated {self.generated})]"
        )


def figure(value: Decimal) -> str:
    """A Vertex figure as the table writes it: 8 decimals at most, no trailing zeros."""
    text = format(value.quantize(_PLACES, rounding=ROUND_HALF_EVEN), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def machine_offering(name: str) -> str | None:
    for prefix, offering in _MACHINE_OFFERING_BY_PREFIX:
        if name.startswith(prefix):
            return offering
    return None


def machine_row(
    name: str,
    region: str,
    ce_hour: float,
    ce_spot: float | None,
    *,
    bundled_lssd_gib: int,
    lssd_month: float | None,
    note: str,
    source: CeSource,
) -> list[str] | None:
    """One machine row; None when the bundled local SSD has no CE price to take off."""
    on_demand = Decimal(repr(ce_hour))
    label = f"CE on-demand {ce_hour:.6f}"
    if bundled_lssd_gib:
        if lssd_month is None:
            return None
        on_demand -= Decimal(bundled_lssd_gib) * Decimal(repr(lssd_month)) / HOURS_PER_MONTH
        label += f" - bundled local SSD {bundled_lssd_gib} GiB"
    vertex = VERTEX_FACTOR * on_demand
    text = f"DERIVED: 1.15 x ({label}) {source.cite()}"
    spot = ""
    if ce_spot is not None:
        spot = figure(Decimal(repr(ce_spot)) + FEE_RATE * on_demand)
        text += f"; spot = CE spot {ce_spot!r} + 15% mgmt fee on CE on-demand ({SPOT_NOTE})"
    if note:
        text += f" ; {note}"
    return ["machine", name, region, "hour", figure(vertex), spot, text, source.generated]


def disk_row(name: str, region: str, ce_month: float, source: CeSource) -> list[str]:
    ce = Decimal(repr(ce_month))
    if name == "pd-balanced":
        # Not a Vertex training boot disk: the CE figure is kept for reference, as in us-central1.
        text = (
            f"CE list price {ce_month!r} only {source.cite()} - NOT a valid Vertex training "
            "bootDiskType (DiskSpec: pd-ssd, pd-standard, hyperdisk-balanced); no Vertex charge"
        )
        return ["disk", name, region, "gb_month", figure(ce), "", text, source.generated]
    vertex = figure(VERTEX_FACTOR * ce)
    prefix = "DERIVED/UNCONFIRMED" if name == "pd-standard" else "DERIVED"
    text = f"{prefix}: 1.15 x CE {name} {ce_month!r} {source.cite()}{_DISK_SUFFIX[name]}"
    return ["disk", name, region, "gb_month", vertex, vertex, text, source.generated]


def _machine_note(rows: Iterable[Mapping[str, str]], name: str) -> str:
    """The family note an existing row of this machine carries (after the last ' ; ')."""
    for row in rows:
        if row["kind"] == "machine" and row["name"] == name and " ; " in row["source"]:
            return row["source"].rsplit(" ; ", 1)[1]
    return ""


def derive(existing: list[dict[str, str]], pricing: Mapping, source: CeSource) -> list[list[str]]:
    """New rows for every catalogue region the existing table lacks, in catalogue order."""
    have = {(r["kind"], r["name"], r["region"]) for r in existing}
    regions = regions_with_offerings()
    instances = pricing["compute"]["instance"]
    storage = pricing["compute"]["storage"]
    lssd = storage["local"]["cost"]
    out: list[list[str]] = []
    machines = dict.fromkeys(r["name"] for r in existing if r["kind"] == "machine")
    for name in machines:
        offering = machine_offering(name)
        spec = instances.get(name)
        if offering is None or spec is None:
            continue
        note = _machine_note(existing, name)
        for region in regions:
            cost = spec["cost"].get(region)
            if (
                ("machine", name, region) in have
                or not offered(region, offering)
                or not cost
                or cost.get("hour") is None
            ):
                continue
            row = machine_row(
                name,
                region,
                cost["hour"],
                cost.get("hour_spot"),
                bundled_lssd_gib=int(spec.get("local-ssd") or 0),
                lssd_month=(lssd.get(region) or {}).get("month"),
                note=note,
                source=source,
            )
            if row is not None:
                out.append(row)
    for name, key in _DISK_KEYS.items():
        for region in regions:
            month = (storage[key]["cost"].get(region) or {}).get("month")
            if ("disk", name, region) in have or month is None:
                continue
            out.append(disk_row(name, region, month, source))
    return out


def merge(lines: list[str], new_rows: list[list[str]]) -> list[str]:
    """The CSV lines with each new row placed after the last line of its (kind, name)."""
    keys = [tuple(next(csv.reader([line]))[:2]) for line in lines]
    result = list(lines)
    for row in new_rows:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(row)
        key = (row[0], row[1])
        positions = [i for i, k in enumerate(keys) if k == key]
        at = positions[-1] + 1 if positions else len(result)
        result.insert(at, buf.getvalue())
        keys.insert(at, key)
    return result


def shipped_path() -> Path:
    return Path(str(resources.files("vertexplan.pricing") / "data" / "vertex_training_prices.csv"))
