"""The parts of the job page (each refreshed on its own by htmx) and of its API record,
registered by the app that owns what they show: runs registers the header, timeline and
checkpoints; logs and costs register theirs in their AppConfig.ready(), so the job page never
imports an app above it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


# The same figure for a page of jobs at once, where the owning app can read them in one query
# (the job list's diagnoses): job id -> figure, a job without one left out.
Reports = Callable[[Sequence[Job]], dict[int, Any]]
_MANY: dict[str, Reports] = {}


def register_reports(name: str, reports_of: Reports) -> None:
    _MANY[name] = reports_of


def reports(name: str, jobs: Sequence[Job]) -> dict[int, Any]:
    """report() of each job, by id (None ones left out): one call for the page when the app
    registered a batch reader, else one per job."""
    reports_of = _MANY.get(name)
    if reports_of is not None:
        return reports_of(jobs)
    return {job.pk: found for job in jobs if (found := report(name, job)) is not None}


def origin(job: Job) -> dict[str, str] | None:
    """What a trial's or Ray job's job is part of (kind, label, url: its sweep or Ray job),
    reported by the app that runs it as `origin-<kind>`; None for a job submitted as a job."""
    if job.on_job_path:
        return None
    return report(f"origin-{job.kind}", job)


def batch_reports(name: str, jobs: Sequence[Job]) -> dict[int, Any]:
    """reports() where the owning app reads a page of jobs at once, and nothing where it
    registered no batch reader: a list never reads its rows one by one."""
    reports_of = _MANY.get(name)
    return reports_of(jobs) if reports_of is not None else {}


def origins(jobs: Sequence[Job]) -> dict[int, dict[str, str]]:
    """origin() of each job of a page that is part of something (a Ray job's cluster), by job
    id: one batch read per kind (batch_reports)."""
    by_kind: dict[str, list[Job]] = {}
    for job in jobs:
        if not job.on_job_path:
            by_kind.setdefault(job.kind, []).append(job)
    found: dict[int, dict[str, str]] = {}
    for kind, of_kind in by_kind.items():
        found.update(batch_reports(f"origin-{kind}", of_kind))
    return found

