"""Hourly estimates against figures worked out by hand from vertex_training_prices.csv.

Each expected figure is written as Decimal arithmetic on the published unit prices (USD), one
rounding per line item, and compared to the micro-dollar and to the cent.
"""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from tests.vertexplan.pricing.factories import REDUCTION_SERVER, cents, job, micros, pool
from vertexplan.pricing.job_estimate import hourly

# pd-ssd boot disk, GB-month price / 730 hours (the 100 GB default unless a test says otherwise)
PD_SSD_US = D("0.195494")
PD_SSD_EU = D("0.21505")
HOURS_PER_MONTH = 730


def disk(price_gb_month: D, gb: int) -> int:
    return micros(price_gb_month * gb / HOURS_PER_MONTH)


def lines(estimate):
    return [(line.pool, line.resource, line.name, line.quantity) for line in estimate.lines]


def test_n1_with_two_t4_and_a_pd_ssd_disk_on_demand_and_spot():
    estimate = hourly(
        job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2, disk=("pd-ssd", 100))), "us-central1"
    )
    assert lines(estimate) == [
        (0, "machine", "n1-standard-8", 1),
        (0, "accelerator", "NVIDIA_TESLA_T4", 2),
        (0, "disk", "pd-ssd", 100),
    ]
    on_demand = micros(D("0.4369977")) + micros(2 * D("0.4025")) + disk(PD_SSD_US, 100)
    spot = micros(D("0.1910197")) + micros(2 * D("0.2275")) + disk(PD_SSD_US, 100)
    assert on_demand == 436_998 + 805_000 + 26_780 == 1_268_778
    assert spot == 191_020 + 455_000 + 26_780 == 672_800
    assert estimate.hourly.on_demand == on_demand
    assert estimate.hourly.spot == spot
    assert cents(estimate.hourly.on_demand) == D("1.27")
    assert cents(estimate.hourly.spot) == D("0.67")
    # T4 is not a FLEX_START GPU.
    assert estimate.hourly.flex is None
    assert any("FLEX_START" in note for note in estimate.notes)


def test_a2_highgpu_8g_includes_its_gpus():
    estimate = hourly(
        job(pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8), strategy="FLEX_START"), "us-central1"
    )
    assert [line.resource for line in estimate.lines] == ["machine", "disk"]
    on_demand = micros(D("33.7959592")) + disk(PD_SSD_US, 100)
    assert on_demand == 33_822_739
    assert estimate.hourly.on_demand == on_demand
    assert cents(estimate.hourly.on_demand) == D("33.82")
    assert estimate.hourly.spot == micros(D("19.832222")) + disk(PD_SSD_US, 100) == 19_859_002
    # FLEX_START: no published rate for it, so no flex price and a note saying so, rather
    # than the on-demand figure under the flex name.
    assert estimate.hourly.flex is None
    assert estimate.rate() is None
    assert estimate.strategy == "FLEX_START"
    assert any("FLEX_START: no published rate for machine a2-highgpu-8g" in n
               for n in estimate.notes)


def test_a3_highgpu_8g_includes_its_gpus():
    estimate = hourly(job(pool("a3-highgpu-8g", "NVIDIA_H100_80GB", 8)), "us-central1")
    assert [line.resource for line in estimate.lines] == ["machine", "disk"]
    assert estimate.hourly.on_demand == micros(D("101.007152")) + disk(PD_SSD_US, 100)
    assert estimate.hourly.on_demand == 101_033_932
    assert cents(estimate.hourly.on_demand) == D("101.03")
    assert estimate.hourly.spot == micros(D("63.78441067")) + disk(PD_SSD_US, 100) == 63_811_191
    assert estimate.hourly.flex is None


def test_g2_standard_8_includes_its_l4():
    estimate = hourly(job(pool("g2-standard-8", "NVIDIA_L4", 1)), "us-central1")
    assert [line.resource for line in estimate.lines] == ["machine", "disk"]
    assert estimate.hourly.on_demand == micros(D("0.98166791")) + disk(PD_SSD_US, 100)
    assert estimate.hourly.on_demand == 1_008_448
    assert cents(estimate.hourly.on_demand) == D("1.01")
    assert estimate.hourly.spot == micros(D("0.60791564")) + disk(PD_SSD_US, 100) == 634_696
    assert estimate.hourly.flex is None


def test_tpu_v5e_2x2_is_four_chips_and_can_run_on_spot():
    estimate = hourly(job(pool("ct5lp-hightpu-4t", topology="2x2")), "us-central1")
    assert lines(estimate) == [(0, "tpu", "TPU_V5_LITEPOD", 4), (0, "disk", "pd-ssd", 100)]
    assert estimate.hourly.on_demand == micros(4 * D("1.38")) + disk(PD_SSD_US, 100) == 5_546_780
    assert cents(estimate.hourly.on_demand) == D("5.55")
    assert estimate.hourly.spot == micros(4 * D("0.42493")) + disk(PD_SSD_US, 100) == 1_726_500
    assert estimate.hourly.flex is None


def test_tpu_v5e_4x4_is_a_pod_of_sixteen_chips_without_spot():
    estimate = hourly(job(pool("ct5lp-hightpu-4t", topology="4x4")), "us-central1")
    # 16 chips on 4 VMs, one 100 GB boot disk each.
    assert lines(estimate) == [(0, "tpu", "TPU_V5_LITEPOD", 16), (0, "disk", "pd-ssd", 400)]
    on_demand = micros(16 * D("1.38")) + disk(PD_SSD_US, 400)
    assert on_demand == 22_080_000 + 107_120
    assert estimate.hourly.on_demand == on_demand
    assert cents(estimate.hourly.on_demand) == D("22.19")
    assert estimate.hourly.spot is None
    assert any("TPU Pod" in note for note in estimate.notes)


MULTI_POOL = job(
    pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8),
    pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8, replicas="3"),
    pool("n1-highcpu-16", replicas=2, image=REDUCTION_SERVER),
)


def test_multi_pool_job_with_a_reduction_server_in_us_central1():
    estimate = hourly(MULTI_POOL, "us-central1")
    assert lines(estimate) == [
        (0, "machine", "a2-highgpu-8g", 1),
        (0, "disk", "pd-ssd", 100),
        (1, "machine", "a2-highgpu-8g", 3),
        (1, "disk", "pd-ssd", 300),
        (2, "machine", "n1-highcpu-16", 2),
        (2, "disk", "pd-ssd", 200),
    ]
    assert [line.role for line in estimate.lines][::2] == ["chief", "workers", "reduction server"]
    on_demand = (
        micros(D("33.7959592"))
        + disk(PD_SSD_US, 100)
        + micros(3 * D("33.7959592"))
        + disk(PD_SSD_US, 300)
        + micros(2 * D("0.65180712"))
        + disk(PD_SSD_US, 200)
    )
    spot = (
        micros(D("19.832222"))
        + disk(PD_SSD_US, 100)
        + micros(3 * D("19.832222"))
        + disk(PD_SSD_US, 300)
        + micros(2 * D("0.28493192"))
        + disk(PD_SSD_US, 200)
    )
    assert on_demand == 33_795_959 + 26_780 + 101_387_878 + 80_340 + 1_303_614 + 53_560
    assert estimate.hourly.on_demand == on_demand == 136_648_131
    assert cents(estimate.hourly.on_demand) == D("136.65")
    assert spot == 19_832_222 + 26_780 + 59_496_666 + 80_340 + 569_864 + 53_560
    assert estimate.hourly.spot == spot == 80_059_432
    assert cents(estimate.hourly.spot) == D("80.06")
    # The Reduction Server pool has no FLEX_START GPU, so the job has no flex rate.
    assert estimate.hourly.flex is None
    assert estimate.pool_hourly(2).on_demand == micros(2 * D("0.65180712")) + disk(PD_SSD_US, 200)
    assert estimate.pool_hourly(0).flex is None  # no published FLEX_START rate


def test_the_same_job_in_europe_west4():
    estimate = hourly(MULTI_POOL, "europe-west4")
    on_demand = (
        micros(D("34.4813424"))
        + disk(PD_SSD_EU, 100)
        + micros(3 * D("34.4813424"))
        + disk(PD_SSD_EU, 300)
        + micros(2 * D("0.71759264"))
        + disk(PD_SSD_EU, 200)
    )
    spot = (
        micros(D("18.0402464"))
        + micros(3 * D("18.0402464"))
        + micros(2 * D("0.45614304"))
        + disk(PD_SSD_EU, 100)
        + disk(PD_SSD_EU, 300)
        + disk(PD_SSD_EU, 200)
    )
    assert on_demand == 34_481_342 + 29_459 + 103_444_027 + 88_377 + 1_435_185 + 58_918
    assert estimate.hourly.on_demand == on_demand
    assert cents(estimate.hourly.on_demand) == D("139.54")
    assert estimate.hourly.spot == spot
    us = hourly(MULTI_POOL, "us-central1")
    assert estimate.hourly.on_demand - us.hourly.on_demand == on_demand - 136_648_131
    assert estimate.region == "europe-west4"
    assert {line.retrieved for line in estimate.lines} == {"2026-07-30"}


@pytest.mark.parametrize(
    ("disk_type", "gb", "price"),
    [("pd-standard", 500, D("0.046")), ("hyperdisk-balanced", 250, D("0.092"))],
)
def test_other_boot_disk_types(disk_type, gb, price):
    estimate = hourly(job(pool("n1-standard-4", disk=(disk_type, gb))), "us-central1")
    assert estimate.lines[-1].name == disk_type
    assert estimate.hourly.on_demand == micros(D("0.21849885")) + micros(price * gb / 730)


def test_missing_disk_spec_means_a_100_gb_pd_ssd():
    spec = job(pool("n1-standard-4"))
    assert "diskSpec" not in spec["jobSpec"]["workerPoolSpecs"][0]
    estimate = hourly(spec, "us-central1")
    assert lines(estimate)[-1] == (0, "disk", "pd-ssd", 100)


def test_accelerator_type_as_enum_number_and_replica_count_as_string():
    by_number = hourly(job(pool("n1-standard-8", 5, "2", replicas="4")), "us-central1")
    by_name = hourly(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2, replicas=4)), "us-central1")
    assert by_number.lines == by_name.lines
    assert by_name.lines[1].quantity == 8


def test_empty_placeholder_pools_cost_nothing():
    spec = job(pool("n1-standard-4"), {}, pool("n1-standard-4", replicas=2))
    estimate = hourly(spec, "us-central1")
    assert sorted({line.pool for line in estimate.lines}) == [0, 2]


def test_every_line_carries_its_source_and_date():
    estimate = hourly(
        job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2, disk=("pd-ssd", 100))), "us-central1"
    )
    machine, t4, pd_ssd = estimate.lines
    assert machine.source.startswith("DERIVED") and machine.retrieved == "2026-07-30"
    assert pd_ssd.source.startswith("CONFIRMED") and pd_ssd.retrieved == "2025-08-16"
    assert t4.retrieved == "skypilot@006059e0 (date n/a)"
    assert estimate.retrieved == ("2025-08-16", "2026-07-30")
    assert estimate.undated == ("NVIDIA_TESLA_T4",)
    assert "vertex_training_prices.csv" in estimate.table_source


def test_a_table_of_other_rows_prices_with_them_and_a3_ultra_boots_from_hyperdisk():
    from vertexplan.pricing import load_table

    csv = (
        "kind,name,region,unit,on_demand_usd,spot_usd,source,retrieved\n"
        "machine,a3-ultragpu-8g,us-central1,hour,90.5,,test figure,2027-01-02\n"
        "disk,hyperdisk-balanced,us-central1,gb_month,0.1,0.1,test figure,2027-01-01\n"
    )
    table = load_table(csv, source="a test table")
    estimate = hourly(job(pool("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8)), "us-central1", table)
    assert lines(estimate) == [
        (0, "machine", "a3-ultragpu-8g", 1),
        (0, "disk", "hyperdisk-balanced", 100),
    ]
    assert estimate.hourly.on_demand == micros(D("90.5")) + micros(D("0.1") * 100 / 730)
    assert estimate.hourly.spot is None
    assert any("no spot price for machine a3-ultragpu-8g" in note for note in estimate.notes)
    assert estimate.table_source == "a test table"
    assert estimate.retrieved == ("2027-01-01", "2027-01-02")
