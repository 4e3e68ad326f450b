"""Loading the price table into typed rows, and looking prices up."""

from __future__ import annotations

import csv
import dataclasses
import io
from decimal import Decimal
from importlib import resources

import pytest

from vertexplan.catalog.offerings import regions_with_offerings
from vertexplan.pricing import PriceRow, PriceTableError, default_table, load_table
from vertexplan.pricing.parse import parse_fee_name, parse_tpu_name, retrieved_dates, split_name
from vertexplan.pricing.table import COLUMNS

HEADER = ",".join(COLUMNS) + "\n"


def shipped_rows() -> list[dict[str, str]]:
    data = resources.files("vertexplan.pricing").joinpath("data/vertex_training_prices.csv")
    text = data.read_text()
    return list(csv.DictReader(io.StringIO(text)))


def test_every_shipped_row_is_loaded_with_every_column():
    table = default_table()
    raw = shipped_rows()
    assert len(table.rows) == len(raw) == 481
    for row, source in zip(table.rows, raw, strict=True):
        assert (row.kind, row.name, row.region, row.unit) == (
            source["kind"],
            source["name"],
            source["region"],
            source["unit"],
        )
        assert row.on_demand == (
            Decimal(source["on_demand_usd"]) if source["on_demand_usd"] else None
        )
        assert row.spot == (Decimal(source["spot_usd"]) if source["spot_usd"] else None)
        assert (row.source, row.retrieved) == (source["source"], source["retrieved"])


def test_rows_are_immutable_and_prices_are_decimals():
    row = default_table().price("machine", "n1-standard-8", "us-central1")
    assert isinstance(row, PriceRow)
    assert row.on_demand == Decimal("0.4369977") and isinstance(row.spot, Decimal)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.on_demand = Decimal(0)  # type: ignore[misc]


def test_lookup_by_key_or_by_the_name_as_written():
    table = default_table()
    by_key = table.get("tpu", "TPU_V5_LITEPOD", "europe-west4")
    assert by_key is table.get(
        "tpu", "TPU_V5_LITEPOD (v5e; ct5lp-hightpu-1t/4t/8t)", "europe-west4"
    )
    assert by_key.on_demand == Decimal("1.794")
    assert table.get("machine", "n1-standard-8", "us-west2") is None


def test_tpu_names_give_the_accelerator_enum_and_the_machines_they_cover():
    table = default_table()
    v5e = table.tpu_price("ct5lp-hightpu-4t", "us-central1")
    assert v5e.accelerator_type == "TPU_V5_LITEPOD"
    assert v5e.generation == "v5e"
    assert v5e.machine_types == ("ct5lp-hightpu-1t", "ct5lp-hightpu-4t", "ct5lp-hightpu-8t")
    v6e = table.tpu_price("ct6e-standard-8t", "asia-southeast1")
    # Vertex has no AcceleratorType for v6e: the table's name is only a key.
    assert (v6e.row.key, v6e.accelerator_type) == ("TPU_V6E", None)
    assert parse_tpu_name("TPU_V5P (v5p; ct5p-hightpu-4t)").machine_types == ("ct5p-hightpu-4t",)
    # Every region the catalogue lists for v5e (derive_tpus).
    assert table.tpu_regions_priced("ct5lp-hightpu-1t") == (
        "asia-southeast1",
        "europe-west4",
        "us-central1",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west4",
    )


def test_management_fees_per_gpu_per_vcpu_and_per_gb():
    table = default_table()
    h100 = table.management_fee("gpu", "NVIDIA_H100_80GB", "us-central1")
    assert h100.usd_per_hour == Decimal("1.4694826")
    assert table.management_fee("vcpu", "a3", "us-central1").usd_per_hour == Decimal("0.0038247")
    assert table.management_fee("gb", "n1", "us-central1").usd_per_hour == Decimal("0.00063555")
    assert {(f.basis, f.subject) for f in table.management_fees("us-central1")} == {
        ("gpu", "NVIDIA_H100_80GB"),
        ("gpu", "NVIDIA_TESLA_T4"),
        ("gpu", "NVIDIA_TESLA_A100"),
        ("gpu", "NVIDIA_L4"),
        ("gpu", "NVIDIA_TESLA_V100"),
        ("gpu", "NVIDIA_TESLA_P100"),
        ("gpu", "NVIDIA_TESLA_P4"),
        ("gpu", "NVIDIA_A100_80GB"),
        ("vcpu", "a3"),
        ("gb", "a3"),
        ("vcpu", "n1"),
        ("gb", "n1"),
    }
    # Elsewhere the A3 per-vCPU/GB fees are not known (CE lists A3 hosts as one price).
    europe = {(f.basis, f.subject) for f in table.management_fees("europe-west4")}
    assert ("gpu", "NVIDIA_H100_80GB") in europe and ("vcpu", "n1") in europe
    assert ("vcpu", "a3") not in europe
    assert parse_fee_name("N1 RAM (per GB; unit = GB-hour)").basis == "gb"


def test_resources_without_a_price():
    table = default_table()
    assert {(r.kind, r.key, r.region) for r in table.unpriced()} == {
        ("accelerator", "NVIDIA_H200_141GB", "europe-west4"),
        ("disk", "hyperdisk-balanced", "europe-west4"),
        ("disk", "hyperdisk-balanced", "asia-southeast1"),
    }
    assert table.price("disk", "hyperdisk-balanced", "europe-west4") is None
    assert table.regions_priced("disk", "hyperdisk-balanced") == ("us-central1",)
    assert table.regions_priced("machine", "a3-megagpu-8g") == (
        "asia-southeast1",
        "europe-west4",
        "us-central1",
        "us-east4",
        "us-east5",
    )
    assert table.regions == tuple(sorted(regions_with_offerings()))


def test_retrieval_dates():
    table = default_table()
    assert (table.oldest_retrieved, table.newest_retrieved) == ("2025-08-16", "2026-10-07")
    undated = {r.retrieved for r in table.undated()}
    assert undated == {"skypilot@006059e0 (date n/a)"}
    assert retrieved_dates("2025-08-16 / 2026-07-30") == ("2025-08-16", "2026-07-30")
    assert retrieved_dates("Cyclenerd 2026-07-30 + skypilot@006059e0") == ("2026-07-30",)
    assert retrieved_dates("2026-09") == ("2026-09",)
    assert retrieved_dates("various 2026") == ("2026",)
    assert retrieved_dates("skypilot@006059e0 (date n/a)") == ()


def test_split_name():
    assert split_name("local-ssd (bundled with A2-ultra/A3)") == (
        "local-ssd",
        "bundled with A2-ultra/A3",
    )
    assert split_name("n1-standard-8") == ("n1-standard-8", "")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("machine,n1-standard-8,us-central1,hour,0.4,0.2,a,2026\n" * 2, "listed twice"),
        ("machine,n1-standard-8,us-central1,gb_month,0.4,,a,2026\n", "per hour"),
        ("disk,pd-ssd,us-central1,gb_month,0.1x,,a,2026\n", "not a decimal"),
        ("disk,pd-ssd,us-central1,gb_month,-0.1,,a,2026\n", "not a price"),
        ("disk,pd-ssd,us-central1,gb_month,,0.1,a,2026\n", "spot price without"),
        ("disk,pd-ssd,us-central1,gb_month,0.1,,,2026\n", "needs its source"),
        ("gpu,T4,us-central1,hour,0.1,,a,2026\n", "unknown kind"),
        ("tpu,TPU_X (x),us-central1,chip_hour,1,,a,2026\n", "generation; machine types"),
        ("management_fee,X (per TPU),us-central1,hour,1,,a,2026\n", "per GPU"),
    ],
)
def test_malformed_rows_fail_when_the_table_loads(line, error):
    with pytest.raises(PriceTableError, match=error):
        load_table(HEADER + line)


def test_a_renamed_column_fails_when_the_table_loads():
    with pytest.raises(PriceTableError, match="columns"):
        load_table(HEADER.replace("spot_usd", "spot") + "disk,pd-ssd,us-central1,gb_month,1,,a,b\n")
