"""Vertex's own latency figures for an endpoint, from Cloud Monitoring (google-cloud-monitoring).

Three reads per endpoint and period, each aligned to 60 s windows with ALIGN_DELTA:
  prediction/online/prediction_latencies  (distribution, ms; latency_type="model") -> p50/95/99
  prediction/online/prediction_count      -> requests
  prediction/online/error_count           -> errors
Series of the same window (one per deployed model, replica set...) are merged here: the
latency buckets are added up before the percentiles are read off them, never averaged.
Used against Vertex only: the emulator has no Cloud Monitoring.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from google.cloud import monitoring_v3
from google.protobuf import duration_pb2, timestamp_pb2

from controlplane.backends.serving_base import LatencySource, LatencyWindow
from controlplane.backends.training import translated_errors

METRIC_PREFIX = "aiplatform.googleapis.com/prediction/online/"
RESOURCE_TYPE = "aiplatform.googleapis.com/Endpoint"
ALIGNMENT_S = 60


def bucket_bounds(options: Any) -> list[float]:
    """Upper bounds of the finite buckets (bucket i covers [bounds[i-1], bounds[i]); bucket 0
    is the underflow below bounds[0] and the last the overflow above bounds[-1])."""
    kind = options.WhichOneof("options")
    if kind == "exponential_buckets":
        b = options.exponential_buckets
        return [b.scale * b.growth_factor ** i for i in range(b.num_finite_buckets + 1)]
    if kind == "linear_buckets":
        b = options.linear_buckets
        return [b.offset + b.width * i for i in range(b.num_finite_buckets + 1)]
    if kind == "explicit_buckets":
        return list(options.explicit_buckets.bounds)
    return []


def percentile(bounds: Sequence[float], counts: Sequence[int], q: float) -> float | None:
    """The q-quantile (0..1) of a bucketed distribution, interpolated linearly inside its
    bucket; None when empty. The underflow and overflow buckets answer their one known edge."""
    total = sum(counts)
    if total == 0 or not bounds:
        return None
    rank = q * total
    seen = 0
    for i, count in enumerate(counts):
        if count and seen + count >= rank:
            if i == 0:
                return bounds[0]
            if i > len(bounds) - 1:
                return bounds[-1]
            low, high = bounds[i - 1], bounds[i]
            return low + (high - low) * (rank - seen) / count
        seen += count
    return bounds[-1]


def _merge(into: list[int], counts: Sequence[int]) -> None:
    for i, c in enumerate(counts):
        if i < len(into):
            into[i] += c
        else:
            into.append(c)


def _ts(value: datetime) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


class CloudMonitoringLatency(LatencySource):
    def __init__(self, client: Any = None, project: str | None = None) -> None:
        self.client = client or monitoring_v3.MetricServiceClient()
        self.project = project or settings.VERTEX_PROJECT

    def _series(self, metric: str, endpoint_id: str, start: datetime, end: datetime,
                extra_filter: str = "") -> list[Any]:
        filter_ = (f'metric.type="{METRIC_PREFIX}{metric}" AND resource.type="{RESOURCE_TYPE}" '
                   f'AND resource.labels.endpoint_id="{endpoint_id}"{extra_filter}')
        request = monitoring_v3.ListTimeSeriesRequest(
            name=f"projects/{self.project}",
            filter=filter_,
            interval=monitoring_v3.TimeInterval(start_time=_ts(start), end_time=_ts(end)),
            aggregation=monitoring_v3.Aggregation(
                alignment_period=duration_pb2.Duration(seconds=ALIGNMENT_S),
                per_series_aligner=monitoring_v3.Aggregation.Aligner.ALIGN_DELTA,
            ),
            view=monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.FULL,
        )
        with translated_errors(f"ListTimeSeries {metric}"):
            return [monitoring_v3.TimeSeries.pb(s) for s in
                    self.client.list_time_series(request=request)]

    def read(self, endpoint_id: str, start: datetime, end: datetime) -> list[LatencyWindow]:
        buckets: dict[datetime, list[int]] = defaultdict(list)
        bounds: dict[datetime, list[float]] = {}
        for series in self._series("prediction_latencies", endpoint_id, start, end,
                                   ' AND metric.labels.latency_type="model"'):
            for point in series.points:
                at = point.interval.end_time.ToDatetime(tzinfo=start.tzinfo)
                dist = point.value.distribution_value
                these = bucket_bounds(dist.bucket_options)
                if bounds.setdefault(at, these) != these:
                    continue  # bucket layouts differ: counts cannot be added up
                _merge(buckets[at], dist.bucket_counts)
        requests = self._counts("prediction_count", endpoint_id, start, end)
        failures = self._counts("error_count", endpoint_id, start, end)
        windows = []
        for at in sorted(set(buckets) | set(requests) | set(failures)):
            counts, edges = buckets.get(at, []), bounds.get(at, [])
            windows.append(LatencyWindow(
                end=at,
                p50_ms=percentile(edges, counts, 0.50),
                p95_ms=percentile(edges, counts, 0.95),
                p99_ms=percentile(edges, counts, 0.99),
                requests=requests.get(at, 0),
                errors=failures.get(at, 0),
            ))
        return windows

    def _counts(self, metric: str, endpoint_id: str, start: datetime,
                end: datetime) -> dict[datetime, int]:
        totals: dict[datetime, int] = defaultdict(int)
        for series in self._series(metric, endpoint_id, start, end):
            for point in series.points:
                at = point.interval.end_time.ToDatetime(tzinfo=start.tzinfo)
                totals[at] += int(point.value.int64_value or point.value.double_value)
        return totals

