"""Cloud Monitoring's latency figures for endpoints on Vertex, stored per 60 s window.

Read every CP_MONITORING_INTERVAL_S for each endpoint with something deployed, from where the
last read ended (Monitoring needs a few minutes to settle, so the last LAG is read again).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from controlplane.backends.serving_base import LatencySource, get_latency_source
from controlplane.serving.models import Deployment, Endpoint, MonitoringWindow

LAG = timedelta(minutes=5)
FIRST_READ = timedelta(hours=1)


def sync_all(source: LatencySource | None = None, now: datetime | None = None) -> int:
    source = source or get_latency_source()
    if source is None:
        return 0
    now = now or timezone.now()
    stored = 0
    for endpoint in Endpoint.objects.filter(
            state=Endpoint.State.READY,
            deployments__state=Deployment.State.DEPLOYED).distinct():
        stored += sync(endpoint, source, now)
    return stored


def sync(endpoint: Endpoint, source: LatencySource, now: datetime) -> int:
    start = (endpoint.monitoring_read_until or now - FIRST_READ) - LAG
    windows = source.read(endpoint.vertex_endpoint_id, start, now)
    for w in windows:
        MonitoringWindow.objects.update_or_create(
            endpoint=endpoint, end=w.end,
            defaults={"p50_ms": w.p50_ms, "p95_ms": w.p95_ms, "p99_ms": w.p99_ms,
                      "requests": w.requests, "errors": w.errors},
        )
    Endpoint.objects.filter(pk=endpoint.pk).update(monitoring_read_until=now)
    return len(windows)
