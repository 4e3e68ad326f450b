"""TPU chip rows derived for every catalogue region that offers the generation (x 1.15, + 15%)."""

from __future__ import annotations

import csv
import re
from decimal import Decimal as D
from importlib import resources

import pytest

from tests.vertexplan.pricing.factories import job, micros, pool
from vertexplan.catalog import get_catalog
from vertexplan.catalog.offerings import offered, regions_offering, tpu_offering
from vertexplan.pricing import default_table
from vertexplan.pricing.derive_accelerators import SkySource
from vertexplan.pricing.derive_tpus import SMALLEST_SLICE, derive_tpus, generations
from vertexplan.pricing.job_estimate import hourly

MARKUP, FEE = D("1.15"), D("0.15")
SKY = SkySource("006059e0")
_ON_DEMAND = re.compile(r"Cloud TPU on-demand ([\d.]+)/chip-h")
_SPOT = re.compile(r"spot = Cloud TPU spot ([\d.]+) \+ 15% fee")
_SLICE = re.compile(
    r"vms\.csv@006059e0: (tpu-[\w-]+) \((\d+) chips?\) ([\d.]+)/h(?:, spot ([\d.]+)/h)?"
)
# Lines of skypilot-catalog catalogs/v8/gcp/vms.csv@006059e0 (one zone each), for the generator.
SKY_HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"  # noqa: E501
SKY_LINES = [
    SKY_HEADER,
    ",,,tpu-v5litepod-1,1,tpu-v5litepod-1,us-central1,us-central1-a,1.2,0.24493",
    ",,,tpu-v5litepod-1,1,tpu-v5litepod-1,europe-west4,europe-west4-a,1.56,0.44498",
    ",,,tpu-v5litepod-1,1,tpu-v5litepod-1,asia-southeast1,asia-southeast1-b,1.56,0.78",
    ",,,tpu-v5litepod-1,1,tpu-v5litepod-1,us-west4,us-west4-a,1.2,0.48",
    ",,,tpu-v5litepod-4,1,tpu-v5litepod-4,us-south1,us-south1-a,5.664,2.2656",
    ",,,tpu-v5p-8,1,tpu-v5p-8,us-central1,us-central1-a,16.8,3.3428",
    ",,,tpu-v5p-8,1,tpu-v5p-8,europe-west4,europe-west4-b,17.01,5.39396",
    ",,,tpu-v5p-8,1,tpu-v5p-8,us-south1,us-south1-a,19.116,5.26455",
    ",,,tpu-v5p-8,1,tpu-v5p-8,europe-west1,europe-west1-b,17.83782,7.13513",
    ",,,tpu-v6e-1,1,tpu-v6e-1,us-central1,us-central1-a,2.7,0.54421",
    ",,,tpu-v6e-1,1,tpu-v6e-1,europe-west4,europe-west4-a,2.97,1.03748",
    ",,,tpu-v6e-1,1,tpu-v6e-1,asia-northeast1,asia-northeast1-b,3.24,0.94352",
    ",,,tpu-v6e-1,1,tpu-v6e-1,us-east4,us-east4-a,2.7,0.57766",
]
# skypilot's 700.0 placeholder, as it writes it for asia-east1 and southamerica-west1, put on two
# regions that do offer v6e so the generator meets it.
PLACEHOLDER_LINES = [
    SKY_HEADER,
    ",,,tpu-v6e-1,1,tpu-v6e-1,asia-northeast1,asia-northeast1-b,700.0,700.0",
    ",,,tpu-v6e-1,1,tpu-v6e-1,us-east4,us-east4-a,2.7,700.0",
]


def _shipped() -> list[dict[str, str]]:
    path = resources.files("vertexplan.pricing") / "data" / "vertex_training_prices.csv"
    return list(csv.DictReader(path.read_text().splitlines()))


def _names() -> list[dict[str, str]]:
    """Only the tpu row names, as a table priced nowhere would have them."""
    return [
        {"kind": "tpu", "name": row["name"], "region": "nowhere"}
        for row in _shipped()
        if row["kind"] == "tpu"
    ]


def test_every_catalogue_region_offering_a_tpu_generation_prices_each_of_its_machines():
    table = default_table()
    machines = get_catalog().tpu_machines.values()
    covered = set()
    for tpu in generations(_shipped()):
        covered.add(tpu.generation)
        for region in regions_offering(tpu_offering(tpu.generation)):
            for machine in (m for m in machines if m.generation == tpu.generation):
                price = table.tpu_price(machine.machine_type, region)
                assert price is not None and price.row.on_demand is not None, (machine, region)
                assert price.row.spot is not None, (machine, region)
    assert covered == {"v5e", "v5p", "v6e"}


def test_newly_covered_regions_are_the_ones_the_catalogue_lists():
    new = {
        (r["name"].split(" ")[0], r["region"])
        for r in _shipped()
        if "vms.csv@006059e0: tpu" in r["source"]
    }
    assert new == {
        ("TPU_V5_LITEPOD", "us-east5"), ("TPU_V5_LITEPOD", "us-south1"),
        ("TPU_V5_LITEPOD", "us-west1"), ("TPU_V5_LITEPOD", "us-west4"),
        ("TPU_V5P", "us-east5"), ("TPU_V5P", "us-south1"),
        ("TPU_V6E", "us-east1"), ("TPU_V6E", "us-east4"), ("TPU_V6E", "us-east5"),
        ("TPU_V6E", "us-west1"), ("TPU_V6E", "asia-northeast1"),
    }  # fmt: skip


def test_every_tpu_row_follows_the_rule_from_the_figures_it_quotes():
    rows = [r for r in _shipped() if r["kind"] == "tpu"]
    assert len(rows) == 19
    for row in rows:
        assert row["source"].startswith("UNCONFIRMED/DERIVED: 1.15 x Cloud TPU on-demand")
        on_demand = D(_ON_DEMAND.search(row["source"])[1])
        spot = D(_SPOT.search(row["source"])[1])
        assert D(row["on_demand_usd"]) == MARKUP * on_demand, row
        assert D(row["spot_usd"]) == spot + FEE * on_demand, row
        assert row["retrieved"] == "skypilot@006059e0 (date n/a)"


def test_new_rows_quote_the_slice_and_divide_it_by_its_chips():
    rows = [r for r in _shipped() if "vms.csv@006059e0: tpu" in r["source"]]
    assert rows
    for row in rows:
        name, chips, price, spot = _SLICE.search(row["source"]).groups()
        assert name in SMALLEST_SLICE.values()
        assert D(_ON_DEMAND.search(row["source"])[1]) == D(price) / int(chips)
        assert D(_SPOT.search(row["source"])[1]) == D(spot) / int(chips)
    v5p = next(r for r in rows if r["name"].startswith("TPU_V5P") and r["region"] == "us-south1")
    # 19.116 / 4 = 4.779 per chip; 5.26455 / 4 = 1.3161375 spot per chip.
    assert (v5p["on_demand_usd"], v5p["spot_usd"]) == ("5.49585", "2.0329875")
    assert "tpu-v5p-8 (4 chips) 19.116/h, spot 5.26455/h" in v5p["source"]


def test_the_generator_reproduces_the_shipped_rows_from_the_same_file():
    derived = {(r[1], r[2]): r for r in derive_tpus(_names(), SKY_LINES, SKY)}
    for row in _shipped():
        key = (row["name"], row["region"])
        if row["kind"] != "tpu" or key not in derived:
            continue
        assert derived[key][4] == row["on_demand_usd"], key
        assert D(row["spot_usd"]) == D(derived[key][5]), key


def test_the_generator_keeps_existing_rows_and_skips_unoffered_regions():
    assert derive_tpus(_shipped(), SKY_LINES, SKY) == []  # every region here is priced already
    fresh = {(r[1].split(" ")[0], r[2]) for r in derive_tpus(_names(), SKY_LINES, SKY)}
    assert ("TPU_V6E", "asia-northeast1") in fresh and ("TPU_V5P", "us-south1") in fresh
    assert not offered("europe-west1", "tpu-v5p") and ("TPU_V5P", "europe-west1") not in fresh
    # The v5e price is that of its 1-chip slice, never read from a bigger one.
    assert ("TPU_V5_LITEPOD", "us-south1") not in fresh


def test_the_700_placeholder_is_no_price():
    fresh = {(r[1].split(" ")[0], r[2]): r for r in derive_tpus(_names(), PLACEHOLDER_LINES, SKY)}
    assert ("TPU_V6E", "asia-northeast1") not in fresh
    us_east4 = fresh[("TPU_V6E", "us-east4")]
    assert us_east4[4] == "3.105" and us_east4[5] == "" and "no spot price" in us_east4[6]
    assert "spot =" not in us_east4[6]


def test_a_tpu_name_with_a_machine_the_catalogue_lacks_is_refused():
    with pytest.raises(ValueError, match="ct9-madeup-1t"):
        generations([{"kind": "tpu", "name": "TPU_V9 (v9; ct9-madeup-1t)", "region": "x"}])


def test_v5e_2x2_in_a_newly_covered_region_prices_with_its_source():
    estimate = hourly(job(pool("ct5lp-hightpu-4t", topology="2x2")), "us-west4")
    tpu, disk = estimate.lines
    assert (tpu.resource, tpu.name, tpu.quantity) == ("tpu", "TPU_V5_LITEPOD", 4)
    # 1.15 x 1.2 = 1.38 per chip; spot 0.48 + 0.15 x 1.2 = 0.66 per chip.
    assert tpu.hourly.on_demand == micros(4 * D("1.38")) == 5_520_000
    assert tpu.hourly.spot == micros(4 * D("0.66")) == 2_640_000
    assert "catalogs/v8/gcp/vms.csv@006059e0: tpu-v5litepod-1 (1 chip) 1.2/h" in tpu.source
    assert tpu.retrieved == "skypilot@006059e0 (date n/a)"
    assert estimate.hourly.on_demand == tpu.hourly.on_demand + disk.hourly.on_demand
