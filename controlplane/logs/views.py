"""The job page's log panel and the charts' data."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from controlplane.logs import queries
from controlplane.runs import access as runs_access
from controlplane.runs.models import ACTIVE_STATES, Job
from vertexplan.logparse.entries import SEVERITY_NUMBERS

LOG_LINES = 200
# The log panel's severity filter: this level and above.
LOG_SEVERITIES = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Enough points for a smooth curve; a long run is thinned so every poll stays small.
MAX_CHART_POINTS = 4000


def log_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The log tail: the newest lines matching the panel's filters, oldest first."""
    try:
        log_filter = queries.LogFilter.from_params(request.GET)
        error = ""
    except queries.BadFilter as exc:
        log_filter, error = queries.LogFilter(), str(exc)
    return {
        "log_lines": queries.tail(job, log_filter, LOG_LINES),
        "log_limit": LOG_LINES,
        "log_filter": log_filter,
        "log_filter_error": error,
        "log_severities": [(name, SEVERITY_NUMBERS[name] == log_filter.severity)
                           for name in LOG_SEVERITIES],
        "log_replicas": queries.replicas(job),
    }


@login_required
@require_GET
def job_metrics(request: HttpRequest, pk: int) -> JsonResponse:
    """The charts' data, one row per step in order (attempt, then step), with the progress
    bar's figures and the failures recognised in the logs."""
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    active = job.state in ACTIVE_STATES
    rows = queries.thin(queries.points(job, latest=True), MAX_CHART_POINTS)
    body: dict[str, Any] = {
        "steps": [p.step for p in rows],
        "attempt": [p.attempt for p in rows],
        # Six significant digits are more than a chart shows, and halve what each poll sends.
        **{name: [_short(p.values[name]) for p in rows] for name in queries.SERIES},
        "state": job.state,
        "active": active,
        "last_step": job.last_step,
        "total_steps": job.total_steps,
        "progress": queries.progress(job, active).as_dict(),
        "failures": queries.diagnosis(job),
    }
    return JsonResponse(body)


def _short(value: float | None) -> float | None:
    return float(f"{value:.6g}") if value is not None else None
