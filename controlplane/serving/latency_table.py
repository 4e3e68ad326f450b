"""The latency tables: on the job page, every endpoint serving one of the job's models (state,
traffic share, p50/p95/p99 over the last window, SLO status); on the endpoint page, its live
deployments side by side (a canary split: each one's traffic share, checkpoint and
percentiles, from the probes that deployment answered).

A fixed number of queries whatever the number of endpoints or deployments: the rows with their
endpoint, SLO and model in one, the probes of the window in one, and percentiles computed here
(the database has no portable percentile).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from controlplane.runs.models import Job
from controlplane.serving import stats
from controlplane.serving.models import Deployment, Endpoint, LatencySample, Slo

# Without an SLO (whose own window wins), percentiles are over the last five minutes.
DEFAULT_WINDOW_S = 300
LIVE = (Deployment.State.DEPLOYING, Deployment.State.DEPLOYED, Deployment.State.UNDEPLOYING)


@dataclass
class EndpointLatency:
    """One endpoint serving a job's model, as the job page shows it."""
    endpoint: Endpoint
    window_s: int
    summary: stats.Summary
    slo_status: str | None              # None: no SLO, or one that is off
    traffic_percent: int = 0            # the share of the endpoint's traffic the job's models get
    models: list[str] = field(default_factory=list)  # "<name> (<checkpoint>)", the job's ones

    def as_dict(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint.pk, "name": self.endpoint.name,
                "state": self.endpoint.state, "traffic_percent": self.traffic_percent,
                "models": self.models, "window_s": self.window_s,
                "samples": self.summary.samples, "errors": self.summary.errors,
                "p50_ms": self.summary.p50_ms, "p95_ms": self.summary.p95_ms,
                "p99_ms": self.summary.p99_ms, "slo_status": self.slo_status}


@dataclass
class DeploymentLatency:
    """One deployment of an endpoint, beside the others."""
    deployment: Deployment
    summary: stats.Summary


def _slo_of(endpoint: Endpoint) -> Slo | None:
    # select_related on the reverse one-to-one leaves the attribute unset when there is none.
    try:
        return endpoint.slo
    except Slo.DoesNotExist:
        return None


def _window_s(slo: Slo | None) -> int:
    return slo.window_s if slo is not None and slo.enabled else DEFAULT_WINDOW_S


def _samples(endpoint_ids: Iterable[int], since: datetime, now: datetime
             ) -> list[tuple[int, str, datetime, float, bool]]:
    ids = list(endpoint_ids)
    if not ids:
        return []
    return list(LatencySample.objects.filter(endpoint_id__in=ids, at__gt=since, at__lte=now)
                .values_list("endpoint_id", "deployed_model_id", "at", "latency_ms", "ok"))


def for_job(job: Job, now: datetime | None = None) -> list[EndpointLatency]:
    """The endpoints of the job's team that serve one of its models now, in endpoint order."""
    now = now or timezone.now()
    deployments = list(
        Deployment.objects.filter(model_entry__job=job, endpoint__team_id=job.team_id,
                                  state__in=LIVE)
        .exclude(endpoint__state=Endpoint.State.DELETED)
        .select_related("endpoint", "endpoint__slo", "model_entry")
        .order_by("endpoint_id", "pk"))
    rows: dict[int, EndpointLatency] = {}
    for d in deployments:
        row = rows.get(d.endpoint_id)
        if row is None:
            slo = _slo_of(d.endpoint)
            row = rows[d.endpoint_id] = EndpointLatency(
                endpoint=d.endpoint, window_s=_window_s(slo), summary=stats.summarize([]),
                slo_status=slo.status if slo is not None and slo.enabled else None)
        row.traffic_percent += d.traffic_percent
        row.models.append(f"{d.model_entry.display_name} ({d.model_entry.source})")
    if not rows:
        return []
    since = now - timedelta(seconds=max(r.window_s for r in rows.values()))
    probes: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for endpoint_id, _, at, latency, ok in _samples(rows, since, now):
        if at > now - timedelta(seconds=rows[endpoint_id].window_s):
            probes[endpoint_id].append((latency, ok))
    for endpoint_id, row in rows.items():
        row.summary = stats.summarize(probes[endpoint_id])
    return list(rows.values())


def for_endpoint(endpoint: Endpoint, deployments: Iterable[Deployment],
                 window_s: int = DEFAULT_WINDOW_S, now: datetime | None = None
                 ) -> list[DeploymentLatency]:
    """`deployments` of `endpoint` side by side, each with the percentiles of the probes it
    answered over the last `window_s` seconds (Vertex says which deployed model answered)."""
    now = now or timezone.now()
    probes: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for _, deployed_model_id, _, latency, ok in _samples(
            [endpoint.pk], now - timedelta(seconds=window_s), now):
        probes[deployed_model_id].append((latency, ok))
    return [DeploymentLatency(d, stats.summarize(probes[d.deployed_model_id]))
            for d in deployments]
