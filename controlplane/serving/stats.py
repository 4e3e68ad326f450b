"""Percentiles of probe latencies and the time series the charts draw, from LatencySample rows.

A bucket's p50/p95/p99 are over the successful probes in it (a timed-out request has no latency
to speak of; it counts in the error rate instead).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

# Bucket widths a chart may use, so the x axis lands on round times.
_NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0..1) with linear interpolation between closest ranks; None if empty."""
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return float(sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction)


@dataclass(frozen=True)
class Summary:
    samples: int
    errors: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None


def summarize(rows: Sequence[tuple[float, bool]]) -> Summary:
    """rows: (latency_ms, ok) pairs."""
    latencies = sorted(latency for latency, ok in rows if ok)
    return Summary(
        samples=len(rows),
        errors=sum(1 for _, ok in rows if not ok),
        p50_ms=percentile(latencies, 0.50),
        p95_ms=percentile(latencies, 0.95),
        p99_ms=percentile(latencies, 0.99),
    )


def bucket_seconds(span: timedelta, max_points: int, at_least_s: float = 1.0) -> int:
    """The smallest round width giving at most `max_points` buckets over `span`."""
    wanted = max(span.total_seconds() / max_points, at_least_s)
    return next((s for s in _NICE_SECONDS if s >= wanted), _NICE_SECONDS[-1])


def series(rows: Sequence[tuple[datetime, float, bool]], start: datetime, end: datetime,
           width_s: int) -> dict[str, list[Any]]:
    """Per bucket of `width_s` seconds from `start`: its start time, sample count, p50/p95/p99
    and error rate. Empty buckets are left out (a gap in the line, not a zero)."""
    buckets: dict[int, list[tuple[float, bool]]] = {}
    for at, latency, ok in rows:
        if start <= at < end:
            index = int((at - start).total_seconds() // width_s)
            buckets.setdefault(index, []).append((latency, ok))
    out: dict[str, list[Any]] = {k: [] for k in
                                 ("t", "samples", "p50", "p95", "p99", "error_rate")}
    for index in sorted(buckets):
        summary = summarize(buckets[index])
        out["t"].append((start + timedelta(seconds=index * width_s)).isoformat())
        out["samples"].append(summary.samples)
        out["p50"].append(_round(summary.p50_ms))
        out["p95"].append(_round(summary.p95_ms))
        out["p99"].append(_round(summary.p99_ms))
        out["error_rate"].append(summary.error_rate)
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
