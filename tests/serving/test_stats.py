"""Percentiles and chart buckets from probes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from controlplane.serving import stats


def test_percentiles_interpolate_between_ranks() -> None:
    values = [float(v) for v in range(1, 101)]
    assert stats.percentile(values, 0.5) == pytest.approx(50.5)
    assert stats.percentile(values, 0.95) == pytest.approx(95.05)
    assert stats.percentile([7.0], 0.99) == 7.0
    assert stats.percentile([], 0.5) is None


def test_a_bucket_s_percentiles_ignore_failed_probes() -> None:
    summary = stats.summarize([(10.0, True), (20.0, True), (10_000.0, False)])
    assert summary.p99_ms == pytest.approx(19.9)
    assert summary.error_rate == pytest.approx(1 / 3)


def test_series_buckets_leave_gaps_for_empty_buckets() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [(start + timedelta(seconds=s), float(s), True) for s in (1, 2, 25)]
    out = stats.series(rows, start, start + timedelta(seconds=30), 10)
    assert out["t"] == [start.isoformat(), (start + timedelta(seconds=20)).isoformat()]
    assert out["samples"] == [2, 1]
    assert out["p50"] == [1.5, 25.0]
    assert stats.bucket_seconds(timedelta(hours=1), 240, at_least_s=1) == 15
    assert stats.bucket_seconds(timedelta(minutes=5), 240, at_least_s=10) == 10
