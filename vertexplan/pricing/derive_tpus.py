"""Derive TPU chip-hour rows for every catalogue region that offers the TPU generation.

The shipped ``tpu`` rows (us-central1, europe-west4, asia-southeast1) were worked out as
1.15 x the Cloud TPU on-demand price per chip, and spot as the Cloud TPU spot price per chip
+ 15% of the on-demand one, from skypilot-catalog's ``catalogs/v8/gcp/vms.csv``. The 1.15 markup
is seen on every confirmed Vertex SKU but no Vertex TPU price table could be read, hence
UNCONFIRMED. This module applies the same rule, from the same file, to every other region the
catalogue lists for the generation; rows the table has are kept as they are.

skypilot lists TPU slices, not chips. The price per chip comes from the one-VM slice whose chips
are the smallest TPU VM of the generation in the catalogue (ct5lp-hightpu-1t: 1 chip,
ct6e-standard-1t: 1 chip, ct5p-hightpu-4t: 4 chips). Only generations the table already has a
row name for are derived: that name says which machine types the price covers.

Run: ``python -m vertexplan.pricing.derive_tpus VMS_CSV --skypilot-commit 006059e0 [--write]``
(``derive_prices --skypilot`` adds these rows as well).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from vertexplan.catalog import get_tpu_machine
from vertexplan.catalog.offerings import offered, regions_with_offerings, tpu_offering
from vertexplan.pricing.derive_accelerators import SkySource, read_sky
from vertexplan.pricing.derive_regions import (
    FEE_RATE,
    VERTEX_FACTOR,
    figure,
    merge,
    shipped_path,
)
from vertexplan.pricing.parse import parse_tpu_name

# skypilot's one-VM slice of each generation; v5p slice names count TensorCores (2 per chip).
SMALLEST_SLICE = {"v5e": "tpu-v5litepod-1", "v6e": "tpu-v6e-1", "v5p": "tpu-v5p-8"}
# skypilot writes 700.0 for on-demand and spot where it has no price: the same figure for every
# slice size of a region (tpu-v6e-1 and tpu-v6e-256 in asia-east1), so it is no chip price.
PLACEHOLDER = Decimal("700")
# The shipped rows quote on-demand per chip to 4 decimals and spot to 5; more where needed.
_ON_DEMAND_PLACES = Decimal("0.0001")
_SPOT_PLACES = Decimal("0.00001")
_MARKUP_NOTE = (
    "(1.15 = markup seen on all confirmed Vertex SKUs; Vertex TPU table not retrievable)"
)


@dataclass(frozen=True)
class TpuGeneration:
    """A tpu row name of the table and the skypilot slice its per-chip price comes from."""

    name: str  # the table's name column, e.g. TPU_V5P (v5p; ct5p-hightpu-4t)
    generation: str  # the catalogue's generation, e.g. v5p
    slice_name: str  # skypilot's AcceleratorName, e.g. tpu-v5p-8
    chips: int  # chips in that slice


def quote(value: Decimal, places: Decimal) -> str:
    """``value`` to at least ``places`` decimals, exactly: every digit the figures follow from."""
    if value == value.quantize(places):
        return format(value.quantize(places), "f")
    return format(value.normalize(), "f")


def generations(existing: Iterable[Mapping[str, str]]) -> list[TpuGeneration]:
    """Each tpu row name of the table whose generation has a skypilot slice, in table order."""
    found: dict[str, TpuGeneration] = {}
    for row in existing:
        if row["kind"] != "tpu" or row["name"] in found:
            continue
        machines = [get_tpu_machine(m) for m in parse_tpu_name(row["name"]).machine_types]
        if not machines or any(m is None for m in machines):
            raise ValueError(f"tpu price {row['name']!r}: a machine type the catalogue lacks")
        generation = {m.generation for m in machines if m is not None}
        if len(generation) != 1:
            raise ValueError(f"tpu price {row['name']!r}: machines of several generations")
        (gen,) = generation
        if gen in SMALLEST_SLICE:
            chips = min(m.chips_per_vm for m in machines if m is not None)
            found[row["name"]] = TpuGeneration(row["name"], gen, SMALLEST_SLICE[gen], chips)
    return list(found.values())


def tpu_row(
    tpu: TpuGeneration,
    region: str,
    slice_price: Decimal,
    slice_spot: Decimal | None,
    source: SkySource,
) -> list[str]:
    on_demand = slice_price / tpu.chips
    spot_text = f", spot {slice_spot}/h" if slice_spot is not None else ", no spot price"
    cite = (
        f"[github:skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv@{source.commit}: "
        f"{tpu.slice_name} ({tpu.chips} chip{'s' if tpu.chips > 1 else ''}) "
        f"{slice_price}/h{spot_text}]"
    )
    text = (
        f"UNCONFIRMED/DERIVED: 1.15 x Cloud TPU on-demand "
        f"{quote(on_demand, _ON_DEMAND_PLACES)}/chip-h {cite} {_MARKUP_NOTE}"
    )
    spot = ""
    if slice_spot is not None:
        chip_spot = slice_spot / tpu.chips
        spot = figure(chip_spot + FEE_RATE * on_demand)
        text += (
            f"; spot = Cloud TPU spot {quote(chip_spot, _SPOT_PLACES)} + 15% fee "
            "(spot on TPU pods not supported)"
        )
    vertex = figure(VERTEX_FACTOR * on_demand)
    return ["tpu", tpu.name, region, "chip_hour", vertex, spot, text, source.retrieved]


def derive_tpus(
    existing: list[dict[str, str]], sky_lines: Iterable[str], source: SkySource
) -> list[list[str]]:
    """TPU rows the table lacks, for every catalogue region offering the generation, where
    skypilot has a price for its one-VM slice there."""
    have = {(r["kind"], r["name"], r["region"]) for r in existing}
    sky = read_sky(sky_lines)
    out: list[list[str]] = []
    for tpu in generations(existing):
        for region in regions_with_offerings():
            if ("tpu", tpu.name, region) in have:
                continue
            if not offered(region, tpu_offering(tpu.generation)):
                continue
            found = sky.get((tpu.slice_name, region))
            if found is None or found[0] == PLACEHOLDER:
                continue  # no Cloud TPU price to derive from: the estimate names priced regions
            price, spot = found
            out.append(tpu_row(tpu, region, price, None if spot == PLACEHOLDER else spot, source))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vms_csv", type=Path, help="skypilot-catalog catalogs/v8/gcp/vms.csv")
    parser.add_argument("--skypilot-commit", required=True, help="its commit, as cited")
    parser.add_argument("--csv", type=Path, default=shipped_path())
    parser.add_argument("--write", action="store_true", help="rewrite the CSV in place")
    args = parser.parse_args(argv)
    raw = args.csv.read_bytes().decode()
    newline = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.splitlines()
    existing = list(csv.DictReader(lines))
    with args.vms_csv.open() as fh:
        new_rows = derive_tpus(existing, fh, SkySource(args.skypilot_commit))
    if args.write:
        args.csv.write_bytes((newline.join(merge(lines, new_rows)) + newline).encode())
    print(f"{len(new_rows)} rows derived", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
