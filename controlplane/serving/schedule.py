"""The serving entries of Celery beat's schedule (config/celery.py adds them)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from controlplane.serving import options

PRUNE_INTERVAL_S = 3600.0


def beat_schedule() -> dict[str, dict[str, Any]]:
    schedule = {
        "probe-endpoints": {
            "task": "controlplane.serving.tasks.probe_endpoints",
            "schedule": options.probe_tick_s(),
            # A tick that waited longer than the next one is useless: drop it.
            "options": {"expires": options.probe_tick_s()},
        },
        "reconcile-serving": {
            "task": "controlplane.serving.tasks.reconcile_serving",
            "schedule": settings.CP_RESOURCE_RECONCILE_INTERVAL_S,
        },
        "prune-latency-samples": {
            "task": "controlplane.serving.tasks.prune_latency_samples",
            "schedule": PRUNE_INTERVAL_S,
        },
    }
    if options.latency_source():
        schedule["read-endpoint-monitoring"] = {
            "task": "controlplane.serving.tasks.read_monitoring",
            "schedule": options.monitoring_interval_s(),
        }
    return schedule
