"""Per-GPU and management-fee rows derived for every catalogue region (x 1.15, + 15% fee)."""

from __future__ import annotations

import re
from decimal import Decimal as D

import pytest

from tests.vertexplan.pricing.factories import job, micros, pool
from vertexplan.catalog.offerings import offered, regions_with_offerings
from vertexplan.pricing import default_table
from vertexplan.pricing.derive_accelerators import (
    N1_GPUS,
    SkySource,
    derive_accelerators,
    read_sky,
)
from vertexplan.pricing.derive_regions import CeSource
from vertexplan.pricing.job_estimate import hourly

MARKUP, FEE = D("1.15"), D("0.15")
CE = CeSource("fd66b26", "2026-07-30")
SKY = SkySource("006059e0")
_QUOTED = re.compile(r"CE on-demand ([\d.]+)")
_QUOTED_SPOT = re.compile(r"spot = CE spot ([\d.]+) \+ 15% mgmt fee on CE on-demand")

# Regions where neither source has what a row needs, so the catalogue offering stays unpriced:
# skypilot lists no P4 in us-west4 and no A2 / A2-ultra / A3 host price in asia-east1 / us-west4 /
# us-south1, and no source read here prices H200 or B200 anywhere.
UNPRICED = {
    ("NVIDIA_TESLA_P4", "us-west4"),
    ("NVIDIA_TESLA_A100", "asia-east1"),
    ("NVIDIA_A100_80GB", "us-west4"),
    ("NVIDIA_H100_80GB", "us-south1"),
}


def test_every_catalogue_region_offering_an_n1_gpu_has_its_price_and_fee():
    table = default_table()
    missing = []
    for key in N1_GPUS:
        for region in regions_with_offerings():
            if not offered(region, key) or (key, region) in UNPRICED:
                continue
            row = table.price("accelerator", key, region)
            fee = table.management_fee("gpu", key, region)
            if row is None or row.spot is None or fee is None:
                missing.append((key, region))
    assert missing == []


@pytest.mark.parametrize(
    "key", ["NVIDIA_L4", "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB"]
)
def test_every_catalogue_region_offering_a_bundled_gpu_has_its_breakdown_and_fee(key):
    table = default_table()
    for region in regions_with_offerings():
        if offered(region, key) and (key, region) not in UNPRICED:
            assert table.price("accelerator", key, region) is not None, region
            assert table.management_fee("gpu", key, region) is not None, region


def test_every_catalogue_region_has_n1_core_and_ram_fees():
    table = default_table()
    for region in regions_with_offerings():
        assert table.management_fee("vcpu", "n1", region) is not None, region
        assert table.management_fee("gb", "n1", region) is not None, region


def _derived(kind: str):
    return [
        row
        for row in default_table().rows
        if row.kind == kind and row.source.startswith("DERIVED: ") and _QUOTED.search(row.source)
    ]


def test_derived_accelerator_figures_follow_exactly_from_the_ce_figures_they_quote():
    rows = _derived("accelerator")
    assert len(rows) >= 35  # the generated ones
    for row in rows:
        ce = D(_QUOTED.search(row.source)[1])
        # Older hand-written rows quote fewer decimals; the generated ones are exact.
        assert abs(row.on_demand - MARKUP * ce) <= D("0.000001"), row
        spot = _QUOTED_SPOT.search(row.source)
        if spot:
            assert row.spot == D(spot[1]) + FEE * ce, row


def test_derived_fees_are_fifteen_percent_of_the_quoted_ce_figure():
    for row in _derived("management_fee"):
        ce = D(_QUOTED.search(row.source)[1])
        assert row.on_demand == row.spot == FEE * ce, row


@pytest.mark.parametrize(
    ("key", "region", "ce", "ce_spot"),
    [
        # skypilot-catalog catalogs/v8/gcp/vms.csv@006059e0, count-1 rows.
        ("NVIDIA_TESLA_T4", "us-west1", "0.35", "0.175"),
        ("NVIDIA_TESLA_T4", "southamerica-east1", "0.48", "0.2329"),
        ("NVIDIA_TESLA_V100", "asia-east1", "2.48", "0.6356"),
        ("NVIDIA_TESLA_P100", "europe-west1", "1.6", "0.2816"),
        ("NVIDIA_TESLA_P4", "us-east4", "0.6", "0.1734"),
    ],
)
def test_a_sample_of_the_ce_data_gives_the_shipped_rows(key, region, ce, ce_spot):
    table = default_table()
    row = table.price("accelerator", key, region)
    assert row.on_demand == MARKUP * D(ce)
    assert row.spot == D(ce_spot) + FEE * D(ce)
    assert "catalogs/v8/gcp/vms.csv@006059e0" in row.source
    assert table.management_fee("gpu", key, region).usd_per_hour == FEE * D(ce)


def test_l4_and_n1_fees_from_pricing_yml_machine_pairs():
    table = default_table()
    # pricing.yml@fd66b26 us-east1: g2-standard-4 0.706832255, g2-standard-8 0.853624271.
    l4 = table.price("accelerator", "NVIDIA_L4", "us-east1")
    ce = D("0.560040")  # 2 x 0.706832255 - 0.853624271 = 0.560040239, quoted to 6 decimals
    assert l4.on_demand == MARKUP * ce and l4.spot is None
    assert "inside the g2 machine price" in l4.source
    # n1-standard-4 0.189999 (4 vCPU, 15 GB), n1-highcpu-16 0.5667888 (16 vCPU, 14.4 GB).
    assert table.management_fee("vcpu", "n1", "us-east1").usd_per_hour == FEE * D("0.031611")
    assert table.management_fee("gb", "n1", "us-east1").usd_per_hour == FEE * D("0.004237")


def test_the_h100_breakdown_lands_on_the_confirmed_billing_sku():
    # us-east4 has us-central1's CE prices; the confirmed Vertex SKU there is $11.2660332/GPU-h.
    row = default_table().price("accelerator", "NVIDIA_H100_80GB", "us-east4")
    assert abs(row.on_demand - D("11.2660332")) < D("0.00001")
    assert row.spot is None and "never add on top" in row.source


def test_a_t4_job_in_us_west1_is_priced_with_source_and_per_gpu_lines():
    estimate = hourly(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2, replicas=1)), "us-west1")
    machine, gpus, disk = estimate.lines
    assert (gpus.name, gpus.quantity) == ("NVIDIA_TESLA_T4", 2)
    assert gpus.unit_prices.on_demand == D("0.4025")
    assert gpus.unit_prices.spot == D("0.175") + FEE * D("0.35")
    assert "vms.csv@006059e0" in gpus.source
    assert gpus.hourly.on_demand == micros(2 * D("0.4025"))
    assert estimate.hourly.on_demand == sum(line.hourly.on_demand for line in (machine, gpus, disk))


# -- the generator on small inputs ---------------------------------------------------------

_SKY_LINES = [
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice",
    ",,,T4,1,{},us-west1,us-west1-a,0.35,0.175",
    ",,,T4,1,{},us-west1,us-west1-b,0.99,0.99",  # a later zone: the first one is taken
    ",,,T4,2,{},us-west1,us-west1-a,0.7,0.35",  # only count-1 rows are per-GPU prices
    ",,,T4,1,{},europe-north1,europe-north1-a,0.4,0.2",  # T4 not offered there
    "a2-highgpu-1g,12.0,85.0,,,,us-west1,us-west1-b,0.73948,0.36975",
]


def test_read_sky_takes_count_one_gpu_rows_and_vm_rows_from_the_first_zone():
    prices = read_sky(_SKY_LINES)
    assert prices[("T4", "us-west1")] == (D("0.35"), D("0.175"))
    assert prices[("a2-highgpu-1g", "us-west1")] == (D("0.73948"), D("0.36975"))


def test_the_generator_adds_only_offered_missing_rows():
    pricing = {
        "compute": {
            "instance": {
                "a2-highgpu-1g": {"cost": {"us-west1": {"hour": 3.673385}}},
            },
            "storage": {"local": {"cost": {}}},
        }
    }
    existing = [
        {"kind": "management_fee", "name": "NVIDIA_TESLA_T4 (per GPU)", "region": "us-west1"}
    ]
    rows = derive_accelerators(existing, pricing, _SKY_LINES, CE, SKY)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("accelerator", "NVIDIA_TESLA_T4", "us-west1"),
        ("accelerator", "NVIDIA_TESLA_A100", "us-west1"),
        ("management_fee", "NVIDIA_TESLA_A100 (per GPU)", "us-west1"),
    ]
    t4, a100, a100_fee = rows
    assert t4[4:6] == ["0.4025", "0.2275"]
    assert a100[4:6] == ["3.37399075", ""]  # 1.15 x (3.673385 - 0.73948); spot on the machine
    assert a100_fee[4] == a100_fee[5] == "0.44008575"
    assert a100[7] == "Cyclenerd 2026-07-30 + skypilot@006059e0"
