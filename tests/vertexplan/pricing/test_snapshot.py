"""The price snapshot a job keeps: JSON, read back exactly, and immune to table refreshes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.vertexplan.pricing.factories import REDUCTION_SERVER, job, pool
from vertexplan.pricing import load_table
from vertexplan.pricing.actual import AttemptFacts, job_cost
from vertexplan.pricing.job_estimate import hourly
from vertexplan.pricing.snapshot import SnapshotError, restore, snapshot
from vertexplan.pricing.table import COLUMNS

JOB = job(
    pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8),
    pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8, replicas="3"),
    pool("n1-highcpu-16", replicas=2, image=REDUCTION_SERVER),
    strategy="SPOT",
)


def stored(estimate) -> dict:
    """What a database JSON column gives back."""
    return json.loads(json.dumps(snapshot(estimate)))


def test_round_trip_through_json():
    estimate = hourly(JOB, "us-central1")
    data = stored(estimate)
    assert restore(data) == estimate
    assert data["rate"] == "spot"
    assert data["hourly"] == {"on_demand": 136_648_131, "spot": 80_059_432, "flex": None}
    line = data["lines"][0]
    prices = {"on_demand": "33.7959592", "spot": "19.832222", "flex": None}
    assert line["unit_prices"] == prices
    assert line["source"].startswith("DERIVED: 8 x page value")
    assert line["retrieved"] == "2026-09"
    assert data["table"]["retrieved"] == ["2025-08-16", "2026-09"]


def test_a_table_refresh_does_not_change_a_past_jobs_cost():
    estimate = hourly(JOB, "us-central1")
    data = stored(estimate)
    # Later, prices double.
    doubled = [",".join(COLUMNS)]
    for row in load_table().rows:
        on_demand = "" if row.on_demand is None else str(row.on_demand * 2)
        spot = "" if row.spot is None else str(row.spot * 2)
        fields = [row.kind, row.name, row.region, row.unit, on_demand, spot, "x", "2027-01-01"]
        doubled.append(",".join(f'"{f}"' for f in fields))
    refreshed = load_table("\n".join(doubled) + "\n", source="refresh")
    assert hourly(JOB, "us-central1", refreshed).rate() > estimate.rate()
    # Two hours at spot, billed from the stored snapshot: the prices it was submitted at.
    start = datetime(2026, 11, 2, tzinfo=UTC)
    end = start + timedelta(hours=2)
    ran = AttemptFacts(1, restore(data), "spot", started_at=start, ended_at=end)
    assert job_cost([ran], [], {0: 1, 1: 3, 2: 2}, now=end).billed == 2 * 80_059_432


def test_tampered_or_foreign_snapshots_are_refused():
    data = stored(hourly(JOB, "us-central1"))
    data["lines"][0]["hourly"]["on_demand"] += 1
    with pytest.raises(SnapshotError, match="differ"):
        restore(data)
    with pytest.raises(SnapshotError, match="format"):
        restore({"format": 99})
    with pytest.raises(SnapshotError):
        restore({"format": 1, "region": "us-central1"})
    with pytest.raises(SnapshotError, match="format"):
        restore([])  # type: ignore[arg-type]
