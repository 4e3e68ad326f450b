"""Derive per-GPU accelerator rows and management-fee rows for every catalogue region.

Cyclenerd's ``pricing.yml`` prices whole machines only, so two more steps are needed:
- G2 and N1 from ``pricing.yml`` alone: g2-standard-4 and g2-standard-8 carry one L4 each and the
  -8 twice the host, so one L4 = 2 x g2-standard-4 - g2-standard-8; two N1 shapes (vCPU and GB
  known) give N1's price per vCPU and per GB, checked against every other N1 shape in the region.
- skypilot-catalog's ``catalogs/v8/gcp/vms.csv`` (Compute Engine list prices too) has the
  per-GPU prices of the GPUs attached to N1 (P4, P100, T4, V100; its count-1 rows) and the host
  (vCPU + memory) prices of A2 and A3. An A2/A3 GPU is then (machine - bundled local SSD - host)
  / GPUs: a breakdown row, never added on top of the machine price, which already includes it.

Vertex = 1.15 x CE; spot = CE spot + 15% of CE on-demand; the management fee is 15% of CE
on-demand (prices README). Every CE figure is quoted to 6 decimals in the row's source and the
row's figures follow exactly from the quoted ones.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from vertexplan.catalog.offerings import offered, regions_with_offerings
from vertexplan.pricing.derive_regions import (
    FEE_RATE,
    HOURS_PER_MONTH,
    SPOT_NOTE,
    VERTEX_FACTOR,
    CeSource,
    figure,
)

_CE_PLACES = Decimal("0.000001")
FEE_RULE = (
    "(rule inferred from confirmed H100/A3 fee SKUs; 'Training/Pipelines Management fee on N1 "
    "...' SKU names exist per GitHub script id 69083071661)"
)
# Vertex AcceleratorType -> skypilot's AcceleratorName, for the GPUs N1 bills per accelerator.
N1_GPUS = {
    "NVIDIA_TESLA_P4": "P4",
    "NVIDIA_TESLA_P100": "P100",
    "NVIDIA_TESLA_T4": "T4",
    "NVIDIA_TESLA_V100": "V100",
}


@dataclass(frozen=True)
class _Bundle:
    """How to take one GPU out of a machine whose price includes it."""

    machine: str  # pricing.yml machine
    gpus: int
    host: str  # skypilot VM row whose price is the host (vCPU + memory) of one ``host_units``
    host_units: int
    family: str


_BUNDLED = {
    "NVIDIA_TESLA_A100": _Bundle("a2-highgpu-1g", 1, "a2-highgpu-1g", 1, "A2"),
    "NVIDIA_A100_80GB": _Bundle("a2-ultragpu-1g", 1, "a2-ultragpu-1g", 1, "A2-ultra"),
    "NVIDIA_H100_80GB": _Bundle("a3-highgpu-8g", 8, "a3-highgpu-1g", 8, "A3"),
    # A3 Mega has A3 High's 208 vCPU / 1872 GB: the same host price is assumed.
    "NVIDIA_H100_MEGA_80GB": _Bundle("a3-megagpu-8g", 8, "a3-highgpu-1g", 8, "A3 Mega"),
}


@dataclass(frozen=True)
class SkySource:
    """skypilot-catalog's GCP catalogue at one commit, as the rows cite it."""

    commit: str

    def cite(self) -> str:
        return (
            "[github:skypilot-org/skypilot-catalog "
            f"catalogs/v8/gcp/vms.csv@{self.commit} (CE list)]"
        )

    @property
    def retrieved(self) -> str:
        return f"skypilot@{self.commit} (date n/a)"


@dataclass(frozen=True)
class CeGpu:
    """The Compute Engine price of one GPU in one region and how it was found."""

    key: str  # the Vertex AcceleratorType
    region: str
    on_demand: Decimal  # quoted to 6 decimals
    spot: Decimal | None  # CE spot, for GPUs billed apart; None for breakdown rows
    how: str  # the derivation, with its citations
    retrieved: str
    note: str  # "" for N1 GPUs; where the GPU is billed, for breakdowns


def _ce(value: Fraction | Decimal | float) -> Decimal:
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Fraction):
        value = Decimal(value.numerator) / Decimal(value.denominator)
    return value.quantize(_CE_PLACES)


def read_sky(lines: Iterable[str]) -> dict[tuple[str, str], tuple[Decimal, Decimal | None]]:
    """(AcceleratorName of a count-1 GPU row, or a VM's InstanceType), region -> (price, spot),
    from the first zone listed (the catalogue repeats a region's price per zone)."""
    prices: dict[tuple[str, str], tuple[Decimal, Decimal | None]] = {}
    for row in csv.DictReader(lines):
        if row["InstanceType"]:
            name = row["InstanceType"]
        elif row["AcceleratorCount"] in ("1", "1.0"):
            name = row["AcceleratorName"]
        else:
            continue
        if not row["Price"]:
            continue
        spot = Decimal(row["SpotPrice"]) if row["SpotPrice"] else None
        prices.setdefault((name, row["Region"]), (Decimal(row["Price"]), spot))
    return prices


def _n1_gpu(key: str, region: str, sky: Mapping, source: SkySource) -> CeGpu | None:
    found = sky.get((N1_GPUS[key], region))
    if found is None:
        return None
    price, spot = found
    return CeGpu(key, region, _ce(price), spot, f"per GPU {source.cite()}", source.retrieved, "")


def _l4(region: str, instances: Mapping, source: CeSource) -> CeGpu | None:
    small = (instances.get("g2-standard-4") or {}).get("cost", {}).get(region)
    large = (instances.get("g2-standard-8") or {}).get("cost", {}).get(region)
    if not small or not large or small.get("hour") is None or large.get("hour") is None:
        return None
    hour = 2 * Decimal(repr(small["hour"])) - Decimal(repr(large["hour"]))
    spot = None
    if small.get("hour_spot") is not None and large.get("hour_spot") is not None:
        spot = _ce(2 * Decimal(repr(small["hour_spot"])) - Decimal(repr(large["hour_spot"])))
    how = (
        f"per GPU = 2 x g2-standard-4 {small['hour']!r} - g2-standard-8 {large['hour']!r} "
        f"(one L4 each, the -8 with twice the host) {source.cite()}"
    )
    note = "only on G2 (inside the g2 machine price: never add on top)"
    return CeGpu("NVIDIA_L4", region, _ce(hour), spot, how, source.generated, note)


def _bundled(
    key: str, region: str, pricing: Mapping, sky: Mapping, ce: CeSource, source: SkySource
) -> CeGpu | None:
    bundle = _BUNDLED[key]
    spec = pricing["compute"]["instance"].get(bundle.machine) or {}
    cost = spec.get("cost", {}).get(region)
    host = sky.get((bundle.host, region))
    if not cost or cost.get("hour") is None or host is None:
        return None
    machine = Decimal(repr(cost["hour"]))
    lssd_gib = int(spec.get("local-ssd") or 0)
    lssd = Decimal(0)
    if lssd_gib:
        month = (pricing["compute"]["storage"]["local"]["cost"].get(region) or {}).get("month")
        if month is None:
            return None
        lssd = Decimal(lssd_gib) * Decimal(repr(month)) / HOURS_PER_MONTH
    host_price = bundle.host_units * host[0]
    gpu = (machine - lssd - host_price) / bundle.gpus
    minus_lssd = f" - bundled local SSD {lssd_gib} GiB {_ce(lssd)}" if lssd_gib else ""
    how = (
        f"per GPU = ({bundle.machine} {cost['hour']!r} {ce.cite()}{minus_lssd} - host "
        f"{bundle.host_units} x {bundle.host} {host[0]} {source.cite()}) / {bundle.gpus}"
    )
    note = f"only on {bundle.family} (inside the machine price: never add on top)"
    retrieved = f"Cyclenerd {ce.generated} + skypilot@{source.commit}"
    return CeGpu(key, region, _ce(gpu), None, how, retrieved, note)


def ce_gpus(
    pricing: Mapping, sky: Mapping, ce: CeSource, source: SkySource
) -> list[CeGpu]:
    """Every GPU's CE price in every catalogue region that offers it, where the data has one."""
    instances = pricing["compute"]["instance"]
    found: list[CeGpu] = []
    for key in (*N1_GPUS, "NVIDIA_L4", *_BUNDLED):
        for region in regions_with_offerings():
            if not offered(region, key):
                continue
            if key in N1_GPUS:
                gpu = _n1_gpu(key, region, sky, source)
            elif key == "NVIDIA_L4":
                gpu = _l4(region, instances, ce)
            else:
                gpu = _bundled(key, region, pricing, sky, ce, source)
            if gpu is not None:
                found.append(gpu)
    return found


def accelerator_row(gpu: CeGpu) -> list[str]:
    vertex = figure(VERTEX_FACTOR * gpu.on_demand)
    text = f"DERIVED: 1.15 x (CE on-demand {gpu.on_demand}) {gpu.how}"
    spot = ""
    if gpu.note:
        text += f" ; {gpu.note}; spot: use machine row"
    elif gpu.spot is not None:
        spot = figure(gpu.spot + FEE_RATE * gpu.on_demand)
        text += f"; spot = CE spot {gpu.spot} + 15% mgmt fee on CE on-demand ({SPOT_NOTE})"
    return ["accelerator", gpu.key, gpu.region, "hour", vertex, spot, text, gpu.retrieved]


def _fee_row(name: str, region: str, ce: Decimal, how: str, retrieved: str) -> list[str]:
    fee = figure(FEE_RATE * ce)
    text = f"DERIVED: 15% x CE on-demand {ce} {FEE_RULE}; CE {how}"
    return ["management_fee", name, region, "hour", fee, fee, text, retrieved]


def gpu_fee_row(gpu: CeGpu) -> list[str]:
    return _fee_row(f"{gpu.key} (per GPU)", gpu.region, gpu.on_demand, gpu.how, gpu.retrieved)


# Two N1 shapes with different vCPU:GB ratios, for the two unknowns.
_N1_PAIR = ("n1-standard-4", "n1-highcpu-16")


def n1_fee_rows(region: str, instances: Mapping, source: CeSource) -> list[list[str]]:
    """N1 core and RAM fee rows, when the region's N1 prices fit one per-vCPU and per-GB price."""
    shapes = {
        name: (Fraction(spec["cpu"]), Fraction(repr(spec["ram"])), Fraction(repr(cost["hour"])))
        for name, spec in instances.items()
        if name.startswith("n1-")
        and (cost := spec.get("cost", {}).get(region))
        and cost.get("hour") is not None
        and spec.get("cpu")
    }
    if not all(name in shapes for name in _N1_PAIR):
        return []
    (c1, r1, p1), (c2, r2, p2) = (shapes[name] for name in _N1_PAIR)
    det = c1 * r2 - c2 * r1
    core, ram = _ce((p1 * r2 - p2 * r1) / det), _ce((c1 * p2 - c2 * p1) / det)
    for cpu, gb, price in shapes.values():
        # CE's per-vCPU and per-GB prices have 6 decimals: the fit must be exact to their rounding.
        if abs(price - (Fraction(core) * cpu + Fraction(ram) * gb)) > (cpu + gb) / 2_000_000:
            return []  # not one linear price per vCPU and GB: no fee rather than a wrong one
    how = (
        f"per vCPU and per GB solved from {_N1_PAIR[0]} and {_N1_PAIR[1]}, matching every N1 "
        f"shape in the region {source.cite()}"
    )
    return [
        _fee_row("N1 core (per vCPU)", region, core, how, source.generated),
        _fee_row("N1 RAM (per GB; unit = GB-hour)", region, ram, how, source.generated),
    ]


def derive_accelerators(
    existing: list[dict[str, str]],
    pricing: Mapping,
    sky_lines: Iterable[str],
    ce: CeSource,
    source: SkySource,
) -> list[list[str]]:
    """Accelerator rows, then management-fee rows, that the existing table lacks."""
    have = {(r["kind"], r["name"], r["region"]) for r in existing}
    gpus = ce_gpus(pricing, read_sky(sky_lines), ce, source)
    out = [accelerator_row(g) for g in gpus if ("accelerator", g.key, g.region) not in have]
    fees = [gpu_fee_row(g) for g in gpus]
    for region in regions_with_offerings():
        if offered(region, "cpu"):
            fees += n1_fee_rows(region, pricing["compute"]["instance"], ce)
    out += [row for row in fees if (row[0], row[1], row[2]) not in have]
    return out
