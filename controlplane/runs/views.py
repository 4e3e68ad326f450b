"""Server-rendered pages: the job list, the job page and the parts of it htmx refreshes.

Every query goes through controlplane.teams.access: a job outside the user's teams is a 404, a page
that submits or cancels is a 403 for a role that cannot.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.generic import DetailView, ListView
from rest_framework.exceptions import ValidationError

from controlplane.runs import access as runs_access
from controlplane.runs import lifecycle, panels
from controlplane.runs.filters import filter_jobs
from controlplane.runs.models import ACTIVE_STATES, Job, JobState
from controlplane.security import audit
from controlplane.teams import access

TIMELINE_LIMIT = 300
CHECKPOINT_LIMIT = 100
# The job list's filters beyond state and team (the API's: controlplane/runs/filters.py).
PAGE_FILTERS = ("user", "accelerator", "created_after", "created_before")


# --- job list ------------------------------------------------------------------------------

class JobListView(LoginRequiredMixin, ListView):
    template_name = "runs/job_list.html"
    context_object_name = "jobs"
    paginate_by = 50

    def get_queryset(self) -> QuerySet[Job]:
        jobs = runs_access.visible_jobs(self.request.user)
        state = self.request.GET.get("state", "")
        if state in JobState.values:
            jobs = jobs.filter(state=state)
        team = self.request.GET.get("team", "")
        if team:
            jobs = jobs.filter(team__slug=team)
        extra = {k: self.request.GET[k] for k in PAGE_FILTERS if self.request.GET.get(k)}
        # A hand-edited URL with a bad date: the list without these filters, not an error page.
        with contextlib.suppress(ValidationError):
            jobs = filter_jobs(jobs, extra)
        return jobs.order_by("-created_at", "-id")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            any_active=any(job.state in ACTIVE_STATES for job in context["jobs"]),
            states=JobState.values,
            teams=access.teams_of(self.request.user).order_by("name"),
            selected_state=self.request.GET.get("state", ""),
            selected_team=self.request.GET.get("team", ""),
            selected={k: self.request.GET.get(k, "") for k in PAGE_FILTERS},
        )
        return context


class JobRowsView(JobListView):
    """The list's table body alone: what the list polls while a listed job is active."""

    template_name = "runs/partials/job_rows.html"


# --- compose ---------------------------------------------------------------------------------





























# --- job detail -------------------------------------------------------------------------------

def int_or_404(value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise Http404("no such job") from exc


def header_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    active = job.state in ACTIVE_STATES
    submitter = access.can_submit(request.user, job.team)
    restart_records = list(job.restart_records.order_by("occurred_at", "id"))
    return {
        "can_cancel": active and submitter,
        "can_clone": access.submit_teams(request.user).exists(),
        "can_resubmit": submitter and not active and job.events.filter(
            kind="checkpoint_saved").exists(),
        "attempts": list(job.attempts.all()),
        "restart_records": restart_records,
    }


# Trainer and emulator detail the restart records already summarise.
_TIMELINE_HIDDEN = ("preemption_notice",)


def timeline_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """State changes, trainer events, recoveries and restarts, newest first."""
    events = list(job.events.exclude(kind__in=_TIMELINE_HIDDEN)
                  .order_by("-timestamp", "-id")[:TIMELINE_LIMIT])
    items = [{"at": e.timestamp, "event": e} for e in events]
    oldest = events[-1].timestamp if len(events) == TIMELINE_LIMIT else None
    records = job.restart_records.select_related("checkpoint")
    if oldest is not None:
        records = records.filter(occurred_at__gte=oldest)
    items += [{"at": r.occurred_at, "restart": r} for r in records]
    items.sort(key=lambda item: item["at"], reverse=True)
    return {"events": events, "timeline": items}


def checkpoints_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    saved = job.events.filter(kind="checkpoint_saved").order_by("-timestamp", "-id")
    return {"checkpoints": saved[:CHECKPOINT_LIMIT]}










def _job_context(request: HttpRequest, job: Job, parts: list[str]) -> dict[str, Any]:
    context: dict[str, Any] = {"job": job, "active": job.state in ACTIVE_STATES}
    for name in parts:
        panel = panels.get(name)
        if panel is not None:
            context.update(panel.context(request, job))
    return context


class JobDetailView(LoginRequiredMixin, DetailView):
    template_name = "runs/job_detail.html"
    context_object_name = "job"

    def get_queryset(self) -> QuerySet[Job]:
        return runs_access.visible_jobs(self.request.user)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(_job_context(self.request, self.object, panels.names()))
        return context


@login_required
@require_GET
def job_partial(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    panel = panels.get(name)
    if panel is None:
        raise Http404("no such part of a job page")
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    return render(request, panel.template, _job_context(request, job, [name]))






@login_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied("your role in this team cannot cancel jobs")
    if lifecycle.request_cancel(job.pk):
        audit.record(request, "job.cancel", job)
        messages.success(request, f"Cancellation of {job.name} requested.")
    else:
        messages.info(request, f"{job.name} has already ended ({job.state}).")
    return redirect("job-detail", pk=job.pk)


