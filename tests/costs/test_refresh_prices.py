"""refresh_prices against a local gRPC fake of the Cloud Billing Catalog: mapped SKUs replace
their rows with source and date, the rest stay; the file is replaced whole; any failure keeps
the old table and says so."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.core.management import CommandError, call_command

from controlplane.core import price_table
from vertexplan.pricing import default_table

from .fake_billing import FakeCatalog, sku


@pytest.fixture
def catalog(settings: Any, tmp_path: Path) -> Iterator[FakeCatalog]:
    fake = FakeCatalog()
    settings.CP_BILLING_CATALOG_ADDR = fake.addr
    settings.CP_PRICES_FILE = str(tmp_path / "prices" / "vertex_training_prices.csv")
    yield fake
    fake.stop()


SKUS = [
    sku("AAAA-T4", "Vertex AI: Training on Nvidia Tesla T4 GPU running in Americas", "0.41"),
    sku("AAAA-T4S", "Vertex AI: Training on Nvidia Tesla T4 GPU (spot) running in Americas",
        "0.2", usage_type="Preemptible", regions=("us-central1", "us-east1")),
    sku("BBBB-CORE", "Vertex AI: Training N1 Predefined Instance Core running in EMEA",
        "0.04", regions=("europe-west4",)),
    sku("BBBB-RAM", "Vertex AI: Training N1 Predefined Instance Ram running in EMEA",
        "0.005", unit="GiBy.h", regions=("europe-west4",)),
    sku("CCCC-PRED", "Vertex AI: Prediction on Nvidia Tesla T4 GPU running in Americas", "9"),
]


def test_mapped_skus_replace_their_rows_and_say_so(catalog: FakeCatalog,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    catalog.skus = list(SKUS)
    before = price_table.current_table()
    assert before is default_table()
    call_command("refresh_prices")
    assert len(catalog.requests) == 3, "three pages of two"
    out = capsys.readouterr().out
    # T4 in us-central1 (both SKUs) and us-east1 (the spot SKU's other region), and the seven
    # n1 machines priced in europe-west4.
    assert f"9 of {len(before.rows)} rows updated" in out and "(5 SKUs)" in out
    table = price_table.current_table()
    assert table.source == price_table.REFRESHED_SOURCE
    t4 = table.get("accelerator", "NVIDIA_TESLA_T4", "us-central1")
    assert (t4.on_demand, t4.spot) == (Decimal("0.41"), Decimal("0.2"))
    assert t4.source == "Cloud Billing Catalog API: Vertex AI SKU AAAA-T4, AAAA-T4S"
    assert t4.retrieved == t4.dates[0] and len(t4.retrieved) == 10
    # n1-standard-8 in europe-west4: 8 vCPUs x 0.04 + 30 GB x 0.005; its spot figure kept.
    n1 = table.get("machine", "n1-standard-8", "europe-west4")
    assert n1.on_demand == Decimal("0.04") * 8 + Decimal("0.005") * 30 == Decimal("0.47")
    assert n1.spot == Decimal("0.3058104") and "on_demand only" in n1.source
    # Rows no SKU maps keep their figures, sources and dates; prediction SKUs are not training.
    for kind, name, region in (("accelerator", "NVIDIA_TESLA_T4", "europe-west4"),
                               ("machine", "n1-standard-8", "us-central1"),
                               ("machine", "a2-highgpu-8g", "us-central1")):
        assert table.get(kind, name, region) == before.get(kind, name, region)
    assert len(table.rows) == len(before.rows)
    # Estimates now use the refreshed prices.
    assert price_table.current_table().get("accelerator", "NVIDIA_TESLA_T4",
                                      "us-central1").on_demand == Decimal("0.41")


@pytest.mark.parametrize("broken", ["unavailable", "nothing maps", "no server"])
def test_a_failed_refresh_keeps_the_old_table_and_says_so(
        catalog: FakeCatalog, settings: Any, broken: str) -> None:
    catalog.skus = list(SKUS)
    call_command("refresh_prices")
    path = price_table.prices_file()
    kept = path.read_bytes()
    if broken == "unavailable":
        catalog.fail = grpc.StatusCode.UNAVAILABLE
    elif broken == "nothing maps":
        catalog.skus = [SKUS[-1]]
    else:
        catalog.stop()
    with pytest.raises(CommandError) as failed:
        call_command("refresh_prices")
    message = str(failed.value)
    assert message.startswith("price refresh failed:")
    assert "The price table in use is unchanged" in message
    assert path.read_bytes() == kept
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".prices-")]
    assert price_table.current_table().get("accelerator", "NVIDIA_TESLA_T4",
                                      "us-central1").on_demand == Decimal("0.41")
