"""The parts of the job page (each refreshed on its own by htmx) and of its API record,
registered by the app that owns what they show: runs registers the header, timeline and
checkpoints; logs and costs register theirs in their AppConfig.ready(), so the job page never
imports an app above it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from controlplane.runs.models import Job

Context = Callable[[HttpRequest, Job], dict[str, Any]]


@dataclass(frozen=True)
class Panel:
    template: str
    context: Context


_PANELS: dict[str, Panel] = {}


def register(name: str, template: str, context: Context) -> None:
    _PANELS[name] = Panel(template, context)


def get(name: str) -> Panel | None:
    return _PANELS.get(name)


def names() -> list[str]:
    return list(_PANELS)


# Figures another app keeps about a job, for its API record and the progress bar (the costs app
# reports "cost" and "cost_so_far_micros").
Report = Callable[[Job], Any]
_REPORTS: dict[str, Report] = {}


def register_report(name: str, report_of: Report) -> None:
    _REPORTS[name] = report_of


def report(name: str, job: Job) -> Any:
    report_of = _REPORTS.get(name)
    return report_of(job) if report_of is not None else None


def origin(job: Job) -> dict[str, str] | None:
    """What a trial's or Ray job's job is part of (kind, label, url: its sweep or Ray job),
    reported by the app that runs it as `origin-<kind>`; None for a job submitted as a job."""
    if job.on_job_path:
        return None
    return report(f"origin-{job.kind}", job)
