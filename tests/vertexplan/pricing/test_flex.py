"""FLEX_START at its own rates: a published rate prices it (with its source), and without one
the estimate says so instead of showing the on-demand figure."""

from __future__ import annotations

from decimal import Decimal

import pytest

from vertexplan.pricing import flex
from vertexplan.pricing.job_estimate import hourly

A100_8 = {"machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
                          "acceleratorCount": 8}, "replicaCount": "1",
          "containerSpec": {"imageUri": "gcr.io/p/i"}}
JOB = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [A100_8],
                                       "scheduling": {"strategy": "FLEX_START"}}}
RATES = flex.parse(
    "kind,name,region,unit,flex_usd,source,retrieved\n"
    "machine,a2-highgpu-8g,us-central1,hour,17.5,a test figure read from a test,2026-11-24\n")


def test_a_published_rate_prices_flex_start_apart_from_on_demand_with_its_source() -> None:
    estimate = hourly(JOB, "us-central1", flex_rates=RATES)
    assert estimate.hourly.flex is not None
    assert estimate.hourly.flex < estimate.hourly.on_demand
    assert estimate.rate() == estimate.hourly.flex
    machine = next(line for line in estimate.lines if line.resource == "machine")
    assert machine.unit_prices.flex == Decimal("17.5")
    assert "FLEX_START: a test figure read from a test" in machine.source
    disk = next(line for line in estimate.lines if line.resource == "disk")
    assert disk.unit_prices.flex == disk.unit_prices.on_demand  # disks keep their price
    assert not any("no published rate" in n for n in estimate.notes)


def test_without_a_rate_flex_start_is_unpriced_and_the_estimate_says_so() -> None:
    estimate = hourly(JOB, "us-central1", flex_rates=flex.FlexRates())
    assert estimate.hourly.flex is None
    assert estimate.hourly.on_demand > 0
    assert any("no published rate for machine a2-highgpu-8g in us-central1" in n
               and "53%" in n for n in estimate.notes)


def test_a_rate_without_its_source_is_refused() -> None:
    with pytest.raises(ValueError, match="source"):
        flex.parse("kind,name,region,unit,flex_usd,source,retrieved\n"
                   "machine,a2-highgpu-8g,us-central1,hour,17.5,,\n")
