"""A CustomJob's per-replica system metrics from Cloud Monitoring (google-cloud-monitoring):
Vertex's training metrics on the resource `cloudml_job`, one ListTimeSeries per metric,
filtered by the job's id, raw points (Vertex samples them every 60 s; the emulator, which
serves the same RPC from its replicas' processes, every 5 s).

Metric and label names are from secondary sources (VERTEX_FACTS.md A9): a series names its
replica in resource.labels.task_name, or metric.labels.task_name, or as task_type and
task_index (`workerpool0` and `0`); this reader takes the first it finds. Several series of
one replica and metric (one per accelerator) are averaged at each time.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from google.cloud import monitoring_v3
from google.cloud.monitoring_v3.services.metric_service.transports import (
    MetricServiceGrpcTransport,
)
from google.protobuf import timestamp_pb2

from controlplane.backends import clients
from controlplane.backends.base import ReplicaMetrics

PREFIX = "ml.googleapis.com/training/"
RESOURCE_TYPE = "cloudml_job"
# ReplicaMetrics field -> the metric Vertex writes it as.
METRICS = {
    "cpu": PREFIX + "cpu/utilization",
    "memory": PREFIX + "memory/utilization",
    "memory_bytes": PREFIX + "memory/bytes_used",
    "accelerator": PREFIX + "accelerator/utilization",
    "accelerator_memory": PREFIX + "accelerator/memory/utilization",
}


def replica_of(series: Any) -> str:
    """The replica a series belongs to, as its labels name it (see the module's docstring)."""
    resource, metric = series.resource.labels, series.metric.labels
    for labels in (resource, metric):
        if labels.get("task_name"):
            return labels["task_name"]
    task_type = metric.get("task_type") or resource.get("task_type")
    if task_type:
        return f"{task_type}-{metric.get('task_index') or resource.get('task_index') or 0}"
    return "job"


def _value(point: Any) -> float:
    value = point.value
    kind = value.WhichOneof("value")
    return float(getattr(value, kind)) if kind in ("double_value", "int64_value") else 0.0


def _ts(value: datetime) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


class SystemMetricsReader:
    def __init__(self, project: str, client: Any = None) -> None:
        self.project = project
        self.client = client or clients.google_client(
            monitoring_v3.MetricServiceClient, MetricServiceGrpcTransport,
            clients.emulator_channel(), regional=False)

    def _series(self, metric: str, job_id: str, start: datetime, end: datetime) -> list[Any]:
        # job_id is the CustomJob's numeric id (the control plane's own record), quoted.
        request = monitoring_v3.ListTimeSeriesRequest(
            name=f"projects/{self.project}",
            filter=(f'metric.type = "{metric}" AND resource.type = "{RESOURCE_TYPE}" '
                    f'AND resource.labels.job_id = "{job_id}"'),
            interval=monitoring_v3.TimeInterval(start_time=_ts(start), end_time=_ts(end)),
            view=monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.FULL,
        )
        # Google's errors reach the caller as they are: VertexBackend translates them.
        return [monitoring_v3.TimeSeries.pb(s)
                for s in self.client.list_time_series(request=request, retry=None)]

    def read(self, job_id: str, start: datetime, end: datetime) -> list[ReplicaMetrics]:
        if not job_id.isdigit():
            return []
        # replica -> field -> time -> values (one per series of that replica)
        found: dict[str, dict[str, dict[datetime, list[float]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list)))
        for name, metric in METRICS.items():
            for series in self._series(metric, job_id, start, end):
                points = found[replica_of(series)][name]
                for point in series.points:
                    points[point.interval.end_time.ToDatetime(tzinfo=UTC)].append(_value(point))
        return [
            ReplicaMetrics(replica=replica, **{
                name: [(at, sum(values) / len(values)) for at, values in sorted(by_time.items())]
                for name, by_time in fields.items()})
            for replica, fields in sorted(found.items())
        ]
