"""The prober: real prediction requests to each deployed endpoint at the rate the endpoint sets
(one every probe_interval_s), each timed from the control plane, so the latency shown is what a
client of the endpoint sees, on Vertex and on the emulator alike.

Beat runs `dispatch` every CP_PROBE_TICK_S; it claims each endpoint that is due with a
conditional UPDATE of next_probe_at (two dispatchers never probe the same endpoint twice for one
slot) and queues one probe task per endpoint, so a slow endpoint never delays the others.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from controlplane.backends import errors
from controlplane.core.queue import send_now
from controlplane.serving import options, predictions
from controlplane.serving.models import Deployment, Endpoint, LatencySample, MonitoringWindow

logger = logging.getLogger(__name__)

# What a probe sends when the endpoint sets no payload: a few greedy bytes from the byte-level
# GPT the trainers serve (trainers/serving/generate.py).
DEFAULT_PAYLOAD: dict[str, Any] = {"instances": [{"prompt": "def ", "max_tokens": 8}]}
MIN_INTERVAL_S = 1.0
MAX_ERROR_CHARS = 300


def due(now: datetime) -> list[Endpoint]:
    """Endpoints with something deployed whose next probe time has come."""
    return list(
        Endpoint.objects.filter(state=Endpoint.State.READY, probe_enabled=True,
                                deployments__state=Deployment.State.DEPLOYED)
        .filter(Q(next_probe_at__isnull=True) | Q(next_probe_at__lte=now))
        .distinct().only("pk", "next_probe_at", "probe_interval_s")
    )


def claim(endpoint: Endpoint, now: datetime) -> bool:
    """Take this probe slot; False if another dispatcher took it first."""
    interval = max(endpoint.probe_interval_s, MIN_INTERVAL_S)
    # From the slot, not from now, so the rate holds even when a tick comes late; a slot
    # missed by more than one interval (a stopped beat) restarts from now.
    start = endpoint.next_probe_at if endpoint.next_probe_at else now
    if now - start > timedelta(seconds=interval):
        start = now
    rows = Endpoint.objects.filter(pk=endpoint.pk)
    rows = rows.filter(next_probe_at=endpoint.next_probe_at) if endpoint.next_probe_at \
        else rows.filter(next_probe_at__isnull=True)
    return rows.update(next_probe_at=start + timedelta(seconds=interval)) == 1


def dispatch(now: datetime | None = None) -> int:
    """Queue a probe for every endpoint that is due; returns how many."""
    now = now or timezone.now()
    queued = 0
    for endpoint in due(now):
        if claim(endpoint, now):
            # Expires: a probe that waited in the queue past its slot measures the queue.
            send_now("controlplane.serving.tasks.probe_endpoint", str(endpoint.pk),
                     expires=max(endpoint.probe_interval_s, MIN_INTERVAL_S))
            queued += 1
    return queued


def probe(endpoint_id: int) -> LatencySample | None:
    """Send one prediction and record how long it took and whether it worked."""
    endpoint = Endpoint.objects.filter(pk=endpoint_id, state=Endpoint.State.READY).first()
    if endpoint is None or not endpoint.vertex_name:
        return None
    payload = endpoint.probe_payload or DEFAULT_PAYLOAD
    error, deployed_model_id = "", ""
    started = time.perf_counter()
    try:
        # Through predictions: a triton endpoint is asked in KServe v2 JSON by rawPredict.
        result = predictions.predict(endpoint, list(payload.get("instances") or []),
                                     payload.get("parameters"),
                                     timeout_s=options.probe_timeout_s())
        deployed_model_id = result.deployed_model_id
    except (errors.BackendError, predictions.BadInstance, predictions.MixedRuntimes) as exc:
        error = str(exc)[:MAX_ERROR_CHARS] or type(exc).__name__
    latency_ms = (time.perf_counter() - started) * 1000.0
    return LatencySample.objects.create(
        endpoint=endpoint, latency_ms=latency_ms, ok=not error, error=error,
        deployed_model_id=deployed_model_id,
    )


def prune(now: datetime | None = None) -> int:
    """Delete probe samples and monitoring windows older than the retention, endpoint by
    endpoint (the order of their indexes)."""
    cutoff = (now or timezone.now()) - timedelta(days=options.retention_days())
    deleted = 0
    for endpoint_id in Endpoint.objects.values_list("pk", flat=True):
        deleted += LatencySample.objects.filter(endpoint_id=endpoint_id, at__lt=cutoff).delete()[0]
        deleted += MonitoringWindow.objects.filter(endpoint_id=endpoint_id,
                                                   end__lt=cutoff).delete()[0]
    return deleted
