"""Rewrite the shipped price table from its sources: machine and disk rows per region from
Compute Engine list prices (``derive_regions``), and, with skypilot's GCP catalogue, per-GPU
accelerator and fee rows (``derive_accelerators``) and TPU chip rows (``derive_tpus``).

Run: ``python -m vertexplan.pricing.derive_prices PRICING_YML --commit fd66b26
[--skypilot VMS_CSV --skypilot-commit 006059e0] [--write]``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from datetime import datetime
from pathlib import Path

from vertexplan.pricing.derive_accelerators import SkySource, derive_accelerators
from vertexplan.pricing.derive_regions import CeSource, derive, merge, shipped_path
from vertexplan.pricing.derive_tpus import derive_tpus


def main(argv: list[str] | None = None) -> int:
    import yaml  # only the generator needs it (not the product)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pricing_yml", type=Path)
    parser.add_argument("--commit", required=True, help="pricing.yml commit, as cited")
    parser.add_argument("--csv", type=Path, default=shipped_path())
    parser.add_argument("--write", action="store_true", help="rewrite the CSV in place")
    parser.add_argument(
        "--skypilot", type=Path, help="skypilot-catalog catalogs/v8/gcp/vms.csv: per-GPU rows"
    )
    parser.add_argument("--skypilot-commit", help="its commit, as cited")
    args = parser.parse_args(argv)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with args.pricing_yml.open() as fh:
        pricing = yaml.load(fh, Loader=loader)
    stamp = datetime.strptime(pricing["about"]["generated"], "%a %b %d %H:%M:%S %Y")
    source = CeSource(args.commit, stamp.date().isoformat())
    raw = args.csv.read_bytes().decode()
    newline = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.splitlines()
    existing = list(csv.DictReader(lines))
    new_rows = derive(existing, pricing, source)
    if args.skypilot is not None:
        if not args.skypilot_commit:
            parser.error("--skypilot-commit: required with --skypilot")
        sky = SkySource(args.skypilot_commit)
        sky_lines = args.skypilot.read_text().splitlines()
        new_rows += derive_accelerators(existing, pricing, sky_lines, source, sky)
        new_rows += derive_tpus(existing, sky_lines, sky)
    merged = merge(lines, new_rows)
    if args.write:
        args.csv.write_bytes((newline.join(merged) + newline).encode())
    print(f"{len(new_rows)} rows derived", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
