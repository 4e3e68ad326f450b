"""The data behind the latency charts (endpoint page, job page, and the API): probe percentiles
and error rate per time bucket, Cloud Monitoring's windows on Vertex, the SLO target and the
alerts, as JSON-ready dicts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from controlplane.runs.models import Job
from controlplane.serving import stats
from controlplane.serving.models import Endpoint, ModelEntry, SloAlert

MAX_POINTS = 240
MIN_MINUTES, MAX_MINUTES = 5, 7 * 24 * 60


def window(minutes: Any) -> int:
    try:
        value = int(minutes)
    except (TypeError, ValueError):
        value = 60
    return min(max(value, MIN_MINUTES), MAX_MINUTES)


def endpoint_latency(endpoint: Endpoint, minutes: int = 60,
                     now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    span = timedelta(minutes=minutes)
    width = stats.bucket_seconds(span, MAX_POINTS, at_least_s=endpoint.probe_interval_s)
    # Buckets start on multiples of their width, so the same sample lands in the same bucket
    # from one poll to the next.
    epoch = int((now - span).timestamp())
    start = datetime.fromtimestamp(epoch - epoch % width, tz=now.tzinfo)
    rows = list(endpoint.latency_samples.filter(at__gte=start, at__lte=now)
                .values_list("at", "latency_ms", "ok"))
    monitoring = list(endpoint.monitoring_windows.filter(end__gte=start, end__lte=now)
                      .values_list("end", "p50_ms", "p95_ms", "p99_ms", "requests", "errors"))
    slo = getattr(endpoint, "slo", None)
    alerts = SloAlert.objects.filter(slo__endpoint=endpoint, at__gte=start).order_by("at")
    return {
        "endpoint": endpoint.pk,
        "name": endpoint.name,
        "start": start.isoformat(),
        "end": now.isoformat(),
        "bucket_s": width,
        "probe": stats.series([(at, ms, ok) for at, ms, ok in rows], start, now, width),
        "monitoring": {
            "t": [m[0].isoformat() for m in monitoring],
            "p50": [m[1] for m in monitoring],
            "p95": [m[2] for m in monitoring],
            "p99": [m[3] for m in monitoring],
            "error_rate": [m[5] / m[4] if m[4] else None for m in monitoring],
        },
        "slo": None if slo is None else {
            "p95_ms": slo.p95_ms, "error_rate": slo.error_rate, "status": slo.status,
            "window_s": slo.window_s, "enabled": slo.enabled,
        },
        "alerts": [{"at": a.at.isoformat(), "kind": a.kind, "p95_ms": a.p95_ms,
                    "error_rate": a.error_rate} for a in alerts],
    }


def job_endpoints(job: Job) -> list[Endpoint]:
    """Endpoints of the job's team that serve (or served) a model registered from this job."""
    entries = ModelEntry.objects.filter(job=job)
    return list(Endpoint.objects.filter(deployments__model_entry__in=entries, team_id=job.team_id)
                .exclude(state=Endpoint.State.DELETED).distinct().order_by("pk"))


def job_latency(job: Job, minutes: int = 60) -> dict[str, Any]:
    now = timezone.now()
    return {"job": job.pk,
            "endpoints": [endpoint_latency(e, minutes, now) for e in job_endpoints(job)]}
