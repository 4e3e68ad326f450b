"""The serving entries of Celery beat's schedule (controlplane/celery.py adds them)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from jobs.serving import conf

PRUNE_INTERVAL_S = 3600.0


def beat_schedule() -> dict[str, dict[str, Any]]:
    schedule = {
        "probe-endpoints": {
            "task": "jobs.serving.tasks.probe_endpoints",
            "schedule": conf.probe_tick_s(),
            # A tick that waited longer than the next one is useless: drop it.
            "options": {"expires": conf.probe_tick_s()},
        },
        "reconcile-serving": {
            "task": "jobs.serving.tasks.reconcile_serving",
            "schedule": settings.CP_RECONCILE_INTERVAL_S,
        },
        "prune-latency-samples": {
            "task": "jobs.serving.tasks.prune_latency_samples",
            "schedule": PRUNE_INTERVAL_S,
        },
    }
    if conf.latency_source():
        schedule["read-endpoint-monitoring"] = {
            "task": "jobs.serving.tasks.read_monitoring",
            "schedule": conf.monitoring_interval_s(),
        }
    return schedule
