"""Cloud Monitoring's latency figures: percentiles from merged distribution buckets, and the
requests controlplane/backends/monitoring.py makes (against a canned MetricServiceClient)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import monitoring_v3
from google.protobuf import timestamp_pb2

from controlplane.backends import monitoring


def test_monitoring_percentiles_come_from_merged_buckets() -> None:
    # Exponential buckets 1, 2, 4, 8, 16 ms: 10 requests in [4, 8) and 10 in [8, 16).
    bounds = [1.0, 2.0, 4.0, 8.0, 16.0]
    counts = [0, 0, 0, 10, 10, 0]
    assert monitoring.percentile(bounds, counts, 0.5) == pytest.approx(8.0)
    assert monitoring.percentile(bounds, counts, 0.95) == pytest.approx(15.2)
    assert monitoring.percentile(bounds, [0] * 6, 0.5) is None


class _Client:
    """MetricServiceClient.list_time_series answering from canned series per metric."""

    def __init__(self, series: dict[str, list[monitoring_v3.TimeSeries]]) -> None:
        self.series = series
        self.filters: list[str] = []

    def list_time_series(self, request: monitoring_v3.ListTimeSeriesRequest):
        self.filters.append(request.filter)
        metric = request.filter.split('metric.type="')[1].split('"')[0].rsplit("/", 1)[-1]
        return self.series.get(metric, [])


def _point(end: datetime, **value: object) -> monitoring_v3.Point:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(end)
    return monitoring_v3.Point(interval=monitoring_v3.TimeInterval(end_time=stamp),
                               value=monitoring_v3.TypedValue(**value))


def test_cloud_monitoring_windows_merge_replicas_and_counts() -> None:
    end = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
    options = {"exponential_buckets": {"num_finite_buckets": 4, "growth_factor": 2.0,
                                       "scale": 1.0}}
    replica = [
        monitoring_v3.TimeSeries(points=[_point(end, distribution_value={
            "count": 10, "bucket_options": options, "bucket_counts": counts})])
        for counts in ([0, 0, 0, 10], [0, 0, 0, 0, 10])
    ]
    client = _Client({
        "prediction_latencies": replica,
        "prediction_count": [monitoring_v3.TimeSeries(points=[_point(end, int64_value=20)])],
        "error_count": [monitoring_v3.TimeSeries(points=[_point(end, int64_value=1)])],
    })
    source = monitoring.CloudMonitoringLatency(client=client, project="p")
    [window] = source.read("cp-ep-3", end - timedelta(minutes=5), end)
    assert window.end == end and window.requests == 20 and window.errors == 1
    assert window.p50_ms == pytest.approx(8.0)
    assert all('resource.labels.endpoint_id="cp-ep-3"' in f for f in client.filters)
    assert 'metric.labels.latency_type="model"' in client.filters[0]
