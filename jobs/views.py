"""Server-rendered pages: job list, compose, job detail and the partials htmx refreshes.

Every query goes through jobs.access: a job outside the user's teams is a 404, a page that
submits or cancels is a 403 for a role that cannot.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View
from django.views.decorators.http import require_GET, require_POST
from django.views.generic import DetailView, ListView

from jobs import access, lifecycle
from jobs.forms import JobForm, clone_warnings, initial_from_request
from jobs.models import ACTIVE_STATES, Job, JobState

TIMELINE_LIMIT = 300
CHECKPOINT_LIMIT = 100
LOG_LINES = 200
# Enough points for a smooth curve; a long run is thinned so every poll stays small.
MAX_CHART_POINTS = 4000


# --- job list ------------------------------------------------------------------------------

class JobListView(LoginRequiredMixin, ListView):
    template_name = "jobs/job_list.html"
    context_object_name = "jobs"
    paginate_by = 50

    def get_queryset(self) -> QuerySet[Job]:
        jobs = access.visible_jobs(self.request.user)
        state = self.request.GET.get("state", "")
        if state in JobState.values:
            jobs = jobs.filter(state=state)
        team = self.request.GET.get("team", "")
        if team:
            jobs = jobs.filter(team__slug=team)
        return jobs.order_by("-created_at", "-id")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            any_active=any(job.state in ACTIVE_STATES for job in context["jobs"]),
            states=JobState.values,
            teams=access.teams_of(self.request.user).order_by("name"),
            selected_state=self.request.GET.get("state", ""),
            selected_team=self.request.GET.get("team", ""),
        )
        return context


class JobRowsView(JobListView):
    """The list's table body alone: what the list polls while a listed job is active."""

    template_name = "jobs/partials/job_rows.html"


# --- compose ---------------------------------------------------------------------------------

class SubmitterRequiredMixin(LoginRequiredMixin):
    """Viewers may look but not compose: 403 for a user with no team to submit to."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and not access.submit_teams(request.user).exists():
            raise PermissionDenied("your role in your teams cannot submit jobs")
        return super().dispatch(request, *args, **kwargs)


class JobComposeView(SubmitterRequiredMixin, View):
    template_name = "jobs/job_compose.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        initial: dict[str, Any] = {}
        warnings: list[str] = []
        clone_of = None
        if request.GET.get("clone"):
            clone_of = get_object_or_404(access.visible_jobs(request.user),
                                         pk=_int_or_404(request.GET["clone"]))
            team = clone_of.team.slug if access.can_submit(request.user, clone_of.team) else ""
            initial = initial_from_request(clone_of.request, team)
            warnings = clone_warnings(clone_of.request)
        form = JobForm(initial=initial, user=request.user)
        return self._render(request, form, clone_of=clone_of, warnings=warnings)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = JobForm(request.POST, user=request.user)
        if not form.is_valid() or form.checked is None:
            return self._render(request, form, status=400)
        checked = form.checked
        job = lifecycle.create_job(team=form.cleaned_data["team"], user=request.user,
                                   request=checked.request, composition=checked.composition)
        messages.success(request, f"Job {job.name} (#{job.pk}) queued for submission.")
        return redirect("job-detail", pk=job.pk)

    def _render(self, request: HttpRequest, form: JobForm, *, status: int = 200,
                **context: Any) -> HttpResponse:
        return render(request, self.template_name, {"form": form, **context}, status=status)


class JobValidateView(SubmitterRequiredMixin, View):
    """A dry run of the compose form: errors, world size and CustomJob; creates nothing."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = JobForm(request.POST, user=request.user)
        form.is_valid()
        return render(request, "jobs/partials/validation.html",
                      {"form": form, "checked": form.checked})


# --- job detail -------------------------------------------------------------------------------

def _int_or_404(value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise Http404("no such job") from exc


def _header(request: HttpRequest, job: Job) -> dict[str, Any]:
    active = job.state in ACTIVE_STATES
    submitter = access.can_submit(request.user, job.team)
    return {
        "can_cancel": active and submitter,
        "can_clone": access.submit_teams(request.user).exists(),
        "attempts": list(job.attempts.all()),
    }


def _timeline(request: HttpRequest, job: Job) -> dict[str, Any]:
    return {"events": job.events.order_by("-timestamp", "-id")[:TIMELINE_LIMIT]}


def _checkpoints(request: HttpRequest, job: Job) -> dict[str, Any]:
    saved = job.events.filter(kind="checkpoint_saved").order_by("-timestamp", "-id")
    return {"checkpoints": saved[:CHECKPOINT_LIMIT]}


def _logs(request: HttpRequest, job: Job) -> dict[str, Any]:
    newest = job.log_lines.order_by("-timestamp", "-insert_id")[:LOG_LINES]
    # Shown oldest first, as a terminal shows them.
    return {"log_lines": list(newest)[::-1], "log_limit": LOG_LINES}


PARTIALS = {
    "header": _header,
    "timeline": _timeline,
    "checkpoints": _checkpoints,
    "logs": _logs,
}


def _job_context(request: HttpRequest, job: Job, parts: list[str]) -> dict[str, Any]:
    context: dict[str, Any] = {"job": job, "active": job.state in ACTIVE_STATES}
    for name in parts:
        context.update(PARTIALS[name](request, job))
    return context


class JobDetailView(LoginRequiredMixin, DetailView):
    template_name = "jobs/job_detail.html"
    context_object_name = "job"

    def get_queryset(self) -> QuerySet[Job]:
        return access.visible_jobs(self.request.user)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(_job_context(self.request, self.object, list(PARTIALS)))
        return context


@login_required
@require_GET
def job_partial(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    if name not in PARTIALS:
        raise Http404("no such part of a job page")
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    return render(request, f"jobs/partials/{name}.html", _job_context(request, job, [name]))


@login_required
@require_GET
def job_metrics(request: HttpRequest, pk: int) -> JsonResponse:
    """The loss curve's data, one row per step in order (attempt, then step)."""
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    rows = list(job.steps.order_by("attempt", "step", "timestamp")
                .values_list("step", "loss", "lr", "tokens_per_s", "attempt"))
    rows = _thin(rows, MAX_CHART_POINTS)
    return JsonResponse({
        "steps": [r[0] for r in rows],
        "loss": [r[1] for r in rows],
        "lr": [r[2] for r in rows],
        "tokens_per_s": [r[3] for r in rows],
        "attempt": [r[4] for r in rows],
        "state": job.state,
        "active": job.state in ACTIVE_STATES,
        "last_step": job.last_step,
        "total_steps": job.total_steps,
    })


def _thin(rows: list[Any], limit: int) -> list[Any]:
    """Every k-th row, keeping the last (the newest point is the one people look at)."""
    if len(rows) <= limit:
        return rows
    stride = -(-len(rows) // limit)
    thinned = rows[::stride]
    if thinned[-1] is not rows[-1]:
        thinned.append(rows[-1])
    return thinned


@login_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied("your role in this team cannot cancel jobs")
    if lifecycle.request_cancel(job.pk):
        messages.success(request, f"Cancellation of {job.name} requested.")
    else:
        messages.info(request, f"{job.name} has already ended ({job.state}).")
    return redirect("job-detail", pk=job.pk)
