"""The job page's log panel and the charts' data."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from contract.events import EVAL, PREEMPTED, REPLICA_RESTARTED, RESUMED
from controlplane.logs import chart_data, queries
from controlplane.logs.models import StepMetric
from controlplane.runs import access as runs_access
from controlplane.runs.models import ACTIVE_STATES, Job
from vertexplan.logparse.entries import SEVERITY_NUMBERS

LOG_LINES = 200
# The log panel's severity filter: this level and above.
LOG_SEVERITIES = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Enough points for a smooth curve; a long run is thinned so every poll stays small.
MAX_CHART_POINTS = 4000
# Evaluations and restart markers drawn on the charts, newest kept.
MAX_CHART_EVENTS = 500
# Trainer events drawn as markers: where a run was stopped and where it went on.
MARKER_KINDS = (PREEMPTED, REPLICA_RESTARTED, RESUMED)


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
    mfu = queries.mfu(job)
    body: dict[str, Any] = {
        "steps": [p.step for p in rows],
        "attempt": [p.attempt for p in rows],
        # Wall-clock x: seconds since the job's first point, and the moments themselves.
        "t": [p.timestamp.isoformat() for p in rows],
        # Six significant digits are more than a chart shows, and halve what each poll sends.
        **{name: [_short(p.values[name]) for p in rows] for name in queries.SERIES},
        # MFU beside throughput: null where it cannot be computed, and the note says why (or
        # how it is computed: FLOPs per token, the peak and its datasheet).
        "mfu": [_short(mfu.value(p)) for p in rows],
        "mfu_reason": mfu.reason(),
        # Every other number the steps report, one panel each (job_detail.js).
        "custom": {name: [_short(v) for v in values]
                   for name, values in queries.custom_series(rows).items()},
        "mfu_basis": mfu.describe(),
        "state": job.state,
        "active": active,
        "last_step": job.last_step,
        "total_steps": job.total_steps,
        "progress": queries.progress(job, active).as_dict(),
        "failures": queries.diagnosis(job),
        "evals": _evals(job),
        "markers": _markers(job),
    }
    # What the charts need to draw without a glitch (chart_data.py): the compile steps left
    # out of the charts they flatten, the markers' labels on lanes, one colour per line.
    chart_data.leave_out_compile_steps(body)
    body["marker_labels"] = chart_data.marker_labels(body["markers"], body["steps"])
    body["eval_names"] = chart_data.eval_names(body["evals"])
    body["colors"] = chart_data.colors(len(set(body["attempt"])) + len(body["eval_names"]))
    return JsonResponse(body)


def _evals(job: Job) -> list[dict[str, Any]]:
    """The trainer's `eval` events (step, metrics{...}): val_loss and whatever else it
    reports, oldest first."""
    rows = (job.events.filter(kind=EVAL).order_by("-timestamp", "-id")
            .values_list("attempt", "step", "timestamp", "data")[:MAX_CHART_EVENTS])
    out = []
    for attempt, step, at, data in reversed(rows):
        metrics = (data or {}).get("metrics")
        if step is None or not isinstance(metrics, dict):
            continue
        numbers = {str(k): _short(float(v)) for k, v in metrics.items()
                   if isinstance(v, int | float) and not isinstance(v, bool)}
        if numbers:
            out.append({"attempt": attempt, "step": step, "t": at.isoformat(),
                        "metrics": numbers})
    return out


def _markers(job: Job) -> list[dict[str, Any]]:
    """Preemptions, replica restarts and resumes, for vertical markers on the charts. A
    replica restart is seen by the reconciler, not printed by the trainer, so it carries no
    step: it gets the step its attempt had reached by then, so it lands on the step axis."""
    rows = (job.events.filter(kind__in=MARKER_KINDS).order_by("-timestamp", "-id")
            .values_list("kind", "attempt", "step", "timestamp", "replica")[:MAX_CHART_EVENTS])
    return [{"kind": kind, "attempt": attempt,
             "step": step if step is not None else _step_reached(job, attempt, at),
             "t": at.isoformat(), "replica": replica}
            for kind, attempt, step, at, replica in reversed(rows)]


def _step_reached(job: Job, attempt: int, at: datetime) -> int | None:
    """The last step the attempt reported at or before AT; None before its first step."""
    return (StepMetric.objects.filter(job=job, attempt=attempt, timestamp__lte=at)
            .order_by("-timestamp", "-step").values_list("step", flat=True).first())


def _short(value: float | None) -> float | None:
    return float(f"{value:.6g}") if value is not None else None
