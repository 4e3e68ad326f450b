"""A job's system metrics per replica (CPU, memory, accelerator), as the backend reads them
from Cloud Monitoring (on Vertex; the emulator samples its replicas' processes): the figures
the job page's panel, GET /api/v1/jobs/<id>/system/ and `vcp jobs top` show.

Read on request, never stored: Cloud Monitoring keeps them. The window is the last MINUTES of
the job's current attempt (up to its end, for a finished job); each replica's history is thinned
to at most CHART_POINTS points, its latest sample kept.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any

from django.http import HttpRequest
from django.utils import timezone

from controlplane.backends import errors
from controlplane.backends.base import ReplicaMetrics, get_backend
from controlplane.runs.models import Job

DEFAULT_MINUTES = 30
MAX_MINUTES = 24 * 60
CHART_POINTS = 120
# A finished job's last samples can land a little after its recorded end.
END_SLACK = timedelta(minutes=2)
# ReplicaMetrics field -> the figure shown, and how a raw value becomes it.
FIGURES = {
    "cpu": ("cpu_percent", lambda v: round(v * 100, 1)),
    "memory": ("memory_percent", lambda v: round(v * 100, 1)),
    "memory_bytes": ("memory_gb", lambda v: round(v / 1e9, 3)),
    "accelerator": ("accelerator_percent", lambda v: round(v * 100, 1)),
    "accelerator_memory": ("accelerator_memory_percent", lambda v: round(v * 100, 1)),
}
FIGURE_NAMES = tuple(name for name, _ in FIGURES.values())


class Unavailable(Exception):
    """Cloud Monitoring could not be read (its message says why)."""


def window(job: Job, minutes: int, now: datetime | None = None) -> tuple[datetime, datetime]:
    now = now or timezone.now()
    end = min(now, job.ended_at + END_SLACK) if job.ended_at else now
    return end - timedelta(minutes=minutes), end


def _history(metrics: ReplicaMetrics) -> list[dict[str, Any]]:
    """One row per sample time, every figure in it (None where that metric has no point)."""
    rows: dict[datetime, dict[str, Any]] = {}
    for field in fields(ReplicaMetrics):
        if field.name not in FIGURES:
            continue
        name, convert = FIGURES[field.name]
        for at, value in getattr(metrics, field.name):
            row = rows.setdefault(at, dict.fromkeys(FIGURE_NAMES))
            row[name] = convert(value)
    return [{"at": at, **rows[at]} for at in sorted(rows)]


def thin(rows: list[Any], most: int = CHART_POINTS) -> list[Any]:
    """At most MOST rows, evenly spaced, the last one kept."""
    if len(rows) <= most:
        return rows
    step = len(rows) / most
    kept = [rows[int(i * step)] for i in range(most - 1)]
    return [*kept, rows[-1]]


def _latest(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's newest value, and when the newest sample was taken."""
    latest: dict[str, Any] = {"at": history[-1]["at"] if history else None}
    for name in FIGURE_NAMES:
        latest[name] = next((row[name] for row in reversed(history) if row[name] is not None),
                            None)
    return latest


def read(job: Job, minutes: int = DEFAULT_MINUTES, now: datetime | None = None
         ) -> dict[str, Any]:
    """The job's replicas, each with its latest figures and its history; Unavailable when
    Cloud Monitoring cannot be read."""
    attempt = job.current_attempt()
    vertex_id = attempt.vertex_job_id if attempt is not None else ""
    start, end = window(job, minutes, now)
    body: dict[str, Any] = {"job": job.pk, "vertex_job_id": vertex_id, "minutes": minutes,
                            "start": start, "end": end, "replicas": [], "note": ""}
    if not vertex_id:
        body["note"] = "The job has no CustomJob on Vertex yet: nothing has been sampled."
        return body
    try:
        found = get_backend().replica_metrics(vertex_id, start, end)
    except errors.BackendError as exc:
        raise Unavailable(f"Cloud Monitoring could not be read: {exc}") from exc
    for metrics in found:
        history = _history(metrics)
        body["replicas"].append({"replica": metrics.replica, "latest": _latest(history),
                                 "history": thin(history)})
    if not body["replicas"]:
        body["note"] = (f"No samples in the last {minutes} minutes"
                        f"{' of the job' if job.ended_at else ''}: Vertex writes them once a "
                        "minute while replicas run.")
    return body


def _sparkline(history: list[dict[str, Any]], name: str, top: float) -> str:
    """SVG polyline points (a 120 x 28 box, 0 at the bottom, TOP at the top) of one figure."""
    values = [row[name] for row in history if row[name] is not None]
    if len(values) < 2:
        return ""
    top = max(top, max(values)) or 1.0
    step = 120 / (len(values) - 1)
    return " ".join(f"{i * step:.1f},{28 - 26 * v / top:.1f}" for i, v in enumerate(values))


def panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The job page's "System" panel. On the page itself it is drawn empty and loads itself
    (htmx), so a slow Cloud Monitoring never holds the page up; only its own request reads."""
    match = getattr(request, "resolver_match", None)
    if match is None or match.url_name != "job-partial":
        return {"system_deferred": True}
    try:
        body = read(job)
    except Unavailable as exc:
        return {"system": None, "system_error": str(exc)}
    for replica in body["replicas"]:
        history = replica["history"]
        replica["cpu_line"] = _sparkline(history, "cpu_percent", 100.0)
        replica["memory_line"] = _sparkline(history, "memory_percent", 100.0)
        replica["accelerator_line"] = _sparkline(history, "accelerator_percent", 100.0)
    return {"system": body}
