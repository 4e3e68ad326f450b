"""Pages of sweeps: the list, a new sweep (its request as JSON, or an imported gcloud YAML /
REST JSON tuning job; clone prefills it), one sweep with its trials (each with its intermediate
measurements) and their parallel-coordinates chart, and cancel."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from controlplane.runs.views import COMPARE_MAX
from controlplane.security import audit
from controlplane.sweeps import curves, lifecycle, links, submission
from controlplane.sweeps.access import visible_sweeps
from controlplane.sweeps.models import Sweep, Trial
from controlplane.teams import access
from vertexplan.digits import ascii_int
from vertexplan.interop import ImportFailed
from vertexplan.sweeps import export, import_text

MAX_BODY_CHARS = 200_000


@login_required
@require_GET
def sweep_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(visible_sweeps(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "sweeps/sweep_list.html", {"page_obj": page, "sweeps": page})


def chart_data(sweep: Sweep, best_id: str | None) -> dict[str, Any]:
    """What the parallel-coordinates chart draws: one line per trial across its parameters and
    the objective."""
    trials = list(sweep.trials.all())
    names: list[str] = []
    for trial in trials:
        names += [k for k in trial.parameters if k not in names]
    return {
        "axes": [*names, sweep.metric_id],
        "goal": sweep.goal,
        "trials": [{"id": t.trial_id, "state": t.state, "best": t.trial_id == best_id,
                    "values": {**t.parameters, sweep.metric_id: t.objective}} for t in trials],
    }


def compare_url(trials: list[Trial]) -> str:
    """The compare page overlaying the trials' loss curves (its first COMPARE_MAX jobs)."""
    ids = [str(t.job_id) for t in trials if t.job_id is not None][:COMPARE_MAX]
    return f"{reverse('job-compare')}?ids={','.join(ids)}" if len(ids) > 1 else ""


@login_required
@require_GET
def sweep_detail(request: HttpRequest, pk: int) -> HttpResponse:
    sweep = get_object_or_404(visible_sweeps(request.user).prefetch_related("trials"), pk=pk)
    best = sweep.best_trial()
    best_id = best.trial_id if best else None
    trials = list(sweep.trials.all())
    for trial in trials:
        trial.links = links.for_trial(sweep, trial)
        trial.curve = curves.curve(trial.measurements, sweep.metric_id)
    return render(request, "sweeps/sweep_detail.html", {
        "sweep": sweep, "trials": trials, "best_id": best_id,
        "links": links.for_sweep(sweep),
        "chart": chart_data(sweep, best_id),
        "compare_url": compare_url(trials),
        "can_submit": access.can_submit(request.user, sweep.team),
        "yaml": export(sweep.tuning_job, "yaml", region=sweep.region),
    })


@login_required
@require_POST
def sweep_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    sweep = get_object_or_404(visible_sweeps(request.user), pk=pk)
    if not access.can_submit(request.user, sweep.team):
        raise PermissionDenied("your role in this team cannot cancel sweeps")
    if lifecycle.request_cancel(sweep.pk):
        audit.record(request, "sweep.cancel", sweep)
        messages.success(request, "Cancel requested.")
    else:
        messages.error(request, f"The sweep is already {sweep.state}.")
    return redirect("sweep-detail", pk=sweep.pk)


def _initial(request: HttpRequest) -> str:
    source = ascii_int(request.GET.get("from"))
    if source is not None:
        sweep = visible_sweeps(request.user).filter(pk=source).first()
        if sweep is not None:
            return json.dumps(lifecycle.clone_request(sweep), indent=2)
    return ""


@login_required
@require_http_methods(["GET", "POST"])
def sweep_new(request: HttpRequest) -> HttpResponse:
    """The sweep request as JSON (the API's body), or a tuning job to import."""
    teams = list(access.submit_teams(request.user))
    if not teams:
        raise PermissionDenied("your role in your teams cannot submit sweeps")
    text, errors = _initial(request), {}
    if request.method == "POST":
        text = request.POST.get("body", "")[:MAX_BODY_CHARS]
        body, errors = _read(text)
        team = next((t for t in teams if t.slug == request.POST.get("team")), None)
        if team is None:
            errors.setdefault("team", []).append("choose one of your teams that may submit")
        if not errors:
            body.pop("team", None)
            try:
                sweep = submission.create_sweep(team=team, user=request.user, request=body)
            except submission.SweepRefused as exc:
                errors = exc.errors
            else:
                audit.record(request, "sweep.submit", sweep)
                return redirect("sweep-detail", pk=sweep.pk)
    return render(request, "sweeps/sweep_new.html", {"body": text, "errors": errors,
                                                     "teams": teams}, status=400 if errors else 200)


def _read(text: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """A sweep request (JSON) or a tuning job document (gcloud YAML / REST JSON)."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and "studySpec" not in body:
        return body, {}
    try:
        imported = import_text(text, region="us-central1")
    except ImportFailed as exc:
        return {}, {"body": [f"not a sweep request (JSON) or a tuning job: {exc}"]}
    return imported.request, imported.errors
