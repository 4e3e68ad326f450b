"""Prices derived for every catalogue region from Compute Engine list prices (x 1.15)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal as D

import pytest

from tests.vertexplan.pricing.factories import job, micros, pool
from vertexplan.catalog.offerings import offered, regions_with_offerings
from vertexplan.pricing import default_table
from vertexplan.pricing.derive_regions import (
    CeSource,
    derive,
    disk_row,
    machine_offering,
    machine_row,
    merge,
)
from vertexplan.pricing.job_estimate import hourly

SOURCE = CeSource("fd66b26", "2026-07-30")


def test_every_catalogue_region_offering_a_family_prices_its_machines():
    table = default_table()
    machines = {r.name for r in table.rows if r.kind == "machine"}
    missing = []
    for name in sorted(machines):
        offering = machine_offering(name)
        assert offering is not None, name
        for region in regions_with_offerings():
            if offered(region, offering) and table.price("machine", name, region) is None:
                missing.append((name, region))
    assert missing == []


def shipped(kind: str, name: str, region: str):
    return default_table().get(kind, name, region)


def test_a_derived_row_reproduces_the_shipped_n1_row_figure_and_source():
    row = machine_row(
        "n1-standard-4",
        "europe-west4",
        0.209168,
        0.12153,
        bundled_lssd_gib=0,
        lssd_month=None,
        note="N1 price excludes GPUs (add accelerator rows)",
        source=SOURCE,
    )
    existing = shipped("machine", "n1-standard-4", "europe-west4")
    assert abs(D(row[4]) - existing.on_demand) < D("1e-6")
    assert abs(D(row[5]) - existing.spot) < D("1e-6")
    assert row[4] == "0.2405432"
    assert row[6] == existing.source and row[7] == existing.retrieved


def test_bundled_local_ssd_is_taken_off_a2_ultra_as_in_the_shipped_row():
    # pricing.yml@fd66b26: a2-ultragpu-1g europe-west4 hour, hour_spot; local SSD 0.088/GiB-month.
    row = machine_row(
        "a2-ultragpu-1g",
        "europe-west4",
        5.58091847945206,
        2.94520671232877,
        bundled_lssd_gib=375,
        lssd_month=0.088,
        note="Vertex price INCLUDES A100 80GB GPU(s)",
        source=SOURCE,
    )
    existing = shipped("machine", "a2-ultragpu-1g", "europe-west4")
    assert abs(D(row[4]) - existing.on_demand) < D("1e-6")
    assert abs(D(row[5]) - existing.spot) < D("1e-6")
    assert "- bundled local SSD 375 GiB" in row[6]
    assert (
        machine_row(
            "a2-ultragpu-1g",
            "x",
            5.0,
            None,
            bundled_lssd_gib=375,
            lssd_month=None,
            note="",
            source=SOURCE,
        )
        is None
    )


def test_a_derived_disk_row_matches_the_shipped_one():
    row = disk_row("pd-ssd", "europe-west4", 0.187, SOURCE)
    existing = shipped("disk", "pd-ssd", "europe-west4")
    assert (D(row[4]), D(row[5])) == (existing.on_demand, existing.spot)
    assert row[6] == existing.source


@pytest.mark.parametrize("region", ["us-east4", "europe-west1"])
def test_an_estimate_in_a_newly_priced_region_carries_source_and_date(region):
    estimate = hourly(job(pool("n1-standard-8", disk=("pd-ssd", 100))), region)
    machine, disk = estimate.lines
    machine_price = shipped("machine", "n1-standard-8", region)
    disk_price = shipped("disk", "pd-ssd", region)
    assert machine.source.startswith("DERIVED: 1.15 x (CE on-demand ")
    assert "pricing.yml@fd66b26" in machine.source and machine.retrieved == "2026-07-30"
    assert disk.source.startswith("DERIVED: 1.15 x CE pd-ssd")
    assert estimate.hourly.on_demand == micros(machine_price.on_demand) + micros(
        disk_price.on_demand * 100 / 730
    )


def _existing() -> list[dict[str, str]]:
    keys = ("kind", "name", "region", "unit", "on_demand_usd", "spot_usd", "source", "retrieved")
    rows = [
        (
            "machine",
            "n1-standard-4",
            "us-central1",
            "hour",
            "0.21849885",
            "0.09550985",
            "CONFIRMED: kept as it is ; N1 price excludes GPUs (add accelerator rows)",
            "2026-10-07",
        ),
        (
            "machine",
            "g2-standard-4",
            "us-central1",
            "hour",
            "0.81285709",
            "",
            "x ; G2 note",
            "2026-07-30",
        ),
        (
            "disk",
            "pd-ssd",
            "us-central1",
            "gb_month",
            "0.195494",
            "0.195494",
            "CONFIRMED",
            "2025-08-16",
        ),
    ]
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _pricing() -> dict:
    def cost(**regions):
        return {region: {"hour": od, "hour_spot": spot} for region, (od, spot) in regions.items()}

    return {
        "compute": {
            "instance": {
                # Offered (cpu) in every catalogue region; CE has no europe-west1 price here.
                "n1-standard-4": {
                    "cost": cost(
                        **{
                            "us-central1": (9.0, 1.0),
                            "us-east4": (0.213985, 0.054755),
                            "southamerica-east1": (0.3, 0.1),
                        }
                    )
                },
                # L4 is not offered in southamerica-east1, so no row there despite a CE price.
                "g2-standard-4": {"cost": cost(**{"southamerica-east1": (1.0, 0.5)})},
            },
            "storage": {
                "local": {"cost": {}},
                "ssd": {"cost": {"us-east4": {"month": 0.187}}},
                "hdd": {"cost": {}},
                "balanced": {"cost": {}},
            },
        }
    }


def test_derive_adds_only_missing_offered_regions_with_a_ce_price():
    new = derive(_existing(), _pricing(), SOURCE)
    assert [(r[0], r[1], r[2]) for r in new] == [
        ("machine", "n1-standard-4", "us-east4"),
        ("machine", "n1-standard-4", "southamerica-east1"),
        ("disk", "pd-ssd", "us-east4"),
    ]
    us_east4 = new[0]
    assert us_east4[4:6] == ["0.24608275", "0.08685275"]  # 1.15 x 0.213985; 0.054755 + 15%
    assert us_east4[6].endswith(" ; N1 price excludes GPUs (add accelerator rows)")
    assert us_east4[7] == "2026-07-30"


def test_merge_keeps_every_line_and_groups_new_rows_with_their_resource():
    existing = _existing()
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(existing[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(existing)
    lines = buf.getvalue().splitlines()
    merged = merge(lines, derive(existing, _pricing(), SOURCE))
    assert [line for line in merged if line in lines] == lines
    assert [next(csv.reader([line]))[1:3] for line in merged[1:]] == [
        ["n1-standard-4", "us-central1"],
        ["n1-standard-4", "us-east4"],
        ["n1-standard-4", "southamerica-east1"],
        ["g2-standard-4", "us-central1"],
        ["pd-ssd", "us-central1"],
        ["pd-ssd", "us-east4"],
    ]
