"""Serving pages: the models and endpoints list, an endpoint's page with its latency chart, and
the panel the job page loads (its models, the endpoints serving them, their latency).

Queries go through controlplane/serving/access.py: another team's objects are a 404; changing
anything takes a member's or admin's role (403 otherwise).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from controlplane.backends import errors
from controlplane.runs import access as runs_access
from controlplane.runs import links
from controlplane.runs.models import Job
from controlplane.serving import (
    access,
    charts,
    forms,
    hardware,
    latency_table,
    lifecycle,
    registry,
    tester,
)
from controlplane.serving.models import Deployment, Endpoint, ModelEntry, Slo, SloAlert
from controlplane.teams import access as job_access

ALERTS_SHOWN = 20


def _require_change(request: HttpRequest, team: Any) -> None:
    if not access.can_change(request.user, team):
        raise PermissionDenied("your role in this team cannot change serving resources")


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    endpoints = list(access.visible_endpoints(request.user).exclude(state=Endpoint.State.DELETED)
                     .prefetch_related("deployments"))
    slos = {s.endpoint_id: s for s in Slo.objects.filter(endpoint__in=endpoints)}
    return render(request, "serving/index.html", {
        "rows": [(e, slos.get(e.pk), sum(d.state == Deployment.State.DEPLOYED
                                         for d in e.deployments.all())) for e in endpoints],
        "entries": access.visible_entries(request.user)[:200],
        "endpoint_form": forms.EndpointForm(user=request.user),
        "register_form": forms.RegisterForm(user=request.user, image_teams=[
            t.slug for t in job_access.submit_teams(request.user)]),
        "can_change": job_access.submit_teams(request.user).exists(),
    })


@login_required
@require_POST
def endpoint_create(request: HttpRequest) -> HttpResponse:
    form = forms.EndpointForm(request.POST, user=request.user)
    if not form.is_valid():
        messages.error(request, f"Endpoint not created: {errors_text(form)}")
        return redirect("serving-index")
    data = form.cleaned_data
    endpoint = lifecycle.create_endpoint(team=data["team"], user=request.user,
                                         name=data["name"],
                                         probe_interval_s=data["probe_interval_s"],
                                         access=data["access"],
                                         psc_project_allowlist=data["psc_project_allowlist"])
    messages.success(request, f"Endpoint {endpoint.name} is being created.")
    return redirect("serving-endpoint", pk=endpoint.pk)


@login_required
@require_POST
def model_register(request: HttpRequest) -> HttpResponse:
    form = forms.RegisterForm(request.POST, user=request.user)
    back = request.POST.get("next") or ""
    if form.is_valid():
        try:
            data = form.cleaned_data
            entry = registry.register(job=data["job"], user=request.user, step=data["step"],
                                      display_name=data["display_name"],
                                      runtime=data["runtime"], image_uri=data["image_uri"],
                                      format=data["format"], artifact_uri=data["artifact_uri"],
                                      team=data["team"], vllm=form.vllm_settings())
        except registry.RegistryError as exc:
            messages.error(request, str(exc))
        except errors.TransientBackendError as exc:  # the model folder could not be read now
            messages.error(request, f"{exc}; nothing was registered, try again")
        else:
            messages.success(request, f"Model {entry.display_name} is being uploaded.")
    else:
        messages.error(request, f"Model not registered: {errors_text(form)}")
    return redirect(back if back.startswith("/") and not back.startswith("//")
                    else "serving-index")


def _endpoint_context(request: HttpRequest, endpoint: Endpoint) -> dict[str, Any]:
    slo = Slo.objects.filter(endpoint=endpoint).first()
    entries = ModelEntry.objects.filter(team=endpoint.team, state=ModelEntry.State.READY)
    deployments = list(endpoint.deployments.select_related("model_entry", "model_entry__job")
                       .exclude(state=Deployment.State.UNDEPLOYED))
    window_s = slo.window_s if slo is not None else latency_table.DEFAULT_WINDOW_S
    return {
        "endpoint": endpoint,
        "deployments": deployments,
        "split": latency_table.for_endpoint(
            endpoint, [d for d in deployments if d.state in latency_table.LIVE], window_s),
        "split_window_s": window_s,
        "past_deployments": endpoint.deployments.filter(state=Deployment.State.UNDEPLOYED)[:10],
        "slo": slo,
        "alerts": SloAlert.objects.filter(slo__endpoint=endpoint).prefetch_related(
            "notifications__channel")[:ALERTS_SHOWN],
        "can_change": access.can_change(request.user, endpoint.team),
        "deploy_form": forms.DeployForm(entries=entries),
        # What the form's first choices cost; its script keeps it up to date as they change.
        "deploy_price": hardware.price_text(
            hardware.hourly(forms.DeployForm.base_fields["machine_type"].initial, "", 0),
            {"machine_type": forms.DeployForm.base_fields["machine_type"].initial}),
        "price_table": hardware.table_provenance(),
        "predict_text": tester.example(endpoint),
        "predict_max_bytes": tester.MAX_BODY_BYTES,
        "slo_form": forms.SloForm(instance=slo),
        "probe_form": forms.ProbeForm(initial={"probe_enabled": endpoint.probe_enabled,
                                               "probe_interval_s": endpoint.probe_interval_s}),
        "metrics": Deployment.Metric.choices,
        "console_links": links.for_endpoint(
            endpoint.vertex_name, reverse("serving-endpoint", args=[endpoint.pk])),
        "console_links_local": links.emulated(),
    }


def errors_text(form: Any) -> str:
    """A refused form's errors as plain text, each after the field it is about, for a message
    (the messages template escapes it once; the form's own as_text() escapes it already)."""
    return "; ".join(f"{field}: {' '.join(str(e) for e in errors)}" if field != "__all__"
                     else " ".join(str(e) for e in errors)
                     for field, errors in form.errors.items())


@login_required
@require_GET
def endpoint_detail(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    return render(request, "serving/endpoint.html", _endpoint_context(request, endpoint))


@login_required
@require_POST
def endpoint_predict(request: HttpRequest, pk: int) -> HttpResponse:
    """The prediction tester: the endpoint page again, with the answer or why there is none."""
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    _require_change(request, endpoint.team)
    text = request.POST.get("request", "")
    try:
        answer = tester.send(endpoint, *tester.read(text))
    except tester.Refused as exc:
        answer, refused = None, str(exc)
    else:
        refused = ""
    context = {**_endpoint_context(request, endpoint), "predict_text": text,
               "prediction": answer, "prediction_refused": refused}
    return render(request, "serving/endpoint.html", context, status=400 if refused else 200)


@login_required
@require_GET
def endpoint_latency(request: HttpRequest, pk: int) -> JsonResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    minutes = charts.window(request.GET.get("minutes", 60))
    return JsonResponse(charts.endpoint_latency(endpoint, minutes))


@login_required
@require_POST
def endpoint_deploy(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    _require_change(request, endpoint.team)
    entries = ModelEntry.objects.filter(team=endpoint.team, state=ModelEntry.State.READY)
    form = forms.DeployForm(request.POST, entries=entries)
    if not form.is_valid():
        messages.error(request, f"Not deployed: {errors_text(form)}")
        return redirect("serving-endpoint", pk=pk)
    data = dict(form.cleaned_data)
    entry = data.pop("model")
    try:
        lifecycle.deploy(endpoint=endpoint, entry=entry, user=request.user, **data)
    except lifecycle.ServingError as exc:
        messages.error(request, f"Not deployed: {exc}")
    else:
        messages.success(request, f"Deploying {entry.display_name}"
                                  f"{hardware.price_text(form.price, data)}.")
    return redirect("serving-endpoint", pk=pk)


@login_required
@require_POST
def deployment_undeploy(request: HttpRequest, pk: int) -> HttpResponse:
    deployment = get_object_or_404(access.visible_deployments(request.user), pk=pk)
    _require_change(request, deployment.endpoint.team)
    try:
        lifecycle.request_undeploy(deployment)
    except lifecycle.ServingError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Undeploying.")
    return redirect("serving-endpoint", pk=deployment.endpoint_id)


@login_required
@require_POST
def deployment_autoscaling(request: HttpRequest, pk: int) -> HttpResponse:
    deployment = get_object_or_404(access.visible_deployments(request.user), pk=pk)
    _require_change(request, deployment.endpoint.team)
    form = forms.AutoscalingForm(request.POST)
    if form.is_valid():
        try:
            lifecycle.set_autoscaling(deployment, **form.cleaned_data)
        except lifecycle.ServingError as exc:
            messages.error(request, f"Autoscaling not changed: {exc}")
        else:
            messages.success(request, "Autoscaling change sent.")
    else:
        messages.error(request, f"Autoscaling not changed: {errors_text(form)}")
    return redirect("serving-endpoint", pk=deployment.endpoint_id)


@login_required
@require_POST
def endpoint_slo(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    _require_change(request, endpoint.team)
    form = forms.SloForm(request.POST, instance=Slo.objects.filter(endpoint=endpoint).first())
    if form.is_valid():
        slo = form.save(commit=False)
        slo.endpoint = endpoint
        slo.save()
        messages.success(request, "SLO saved.")
    else:
        messages.error(request, f"SLO not saved: {errors_text(form)}")
    return redirect("serving-endpoint", pk=pk)


@login_required
@require_POST
def endpoint_probe(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    _require_change(request, endpoint.team)
    form = forms.ProbeForm(request.POST)
    if form.is_valid():
        Endpoint.objects.filter(pk=pk).update(next_probe_at=None, **form.cleaned_data)
        messages.success(request, "Probe settings saved.")
    else:
        messages.error(request, f"Probe settings not saved: {errors_text(form)}")
    return redirect("serving-endpoint", pk=pk)


@login_required
@require_POST
def endpoint_delete(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(access.visible_endpoints(request.user), pk=pk)
    _require_change(request, endpoint.team)
    lifecycle.request_delete(endpoint)
    messages.success(request, f"Endpoint {endpoint.name}: undeploying and deleting.")
    return redirect("serving-index")


def job_serving_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The job page's serving panel (registered with the runs app's panels): the job's models
    and the form registering another."""
    return {
        "serving_entries": _job_entries(request, job),
        "serving_steps": registry.checkpoint_steps(job),
        "can_register": job_access.can_submit_here(request, job.team),
        "serving_runtimes": ModelEntry.Runtime.choices,
        "serving_formats": ModelEntry.Format.choices,
        "serving_triton_image": registry.triton_image(),
    }


def _job_entries(request: HttpRequest, job: Job) -> list[ModelEntry]:
    """The job's registered models, read once per request however many panels ask."""
    read: dict[int, list[ModelEntry]] = request.__dict__.setdefault("_cp_job_entries", {})
    if job.pk not in read:
        read[job.pk] = list(ModelEntry.objects.filter(job=job))
    return read[job.pk]


def job_serving_latency(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The panel's latency table, a panel of its own so that it refreshes without redrawing
    the charts beside it: each endpoint of the job's team serving one of its models. Most jobs
    have no model registered, and then no endpoint serves one: no query for endpoints."""
    if not _job_entries(request, job):
        return {"serving_rows": []}
    return {"serving_rows": latency_table.for_job(job)}


@login_required
@require_GET
def job_panel(request: HttpRequest, pk: int) -> HttpResponse:
    """The whole panel on its own."""
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    return render(request, "serving/partials/job_panel.html",
                  {"job": job, **job_serving_panel(request, job),
                   **job_serving_latency(request, job)})


@login_required
@require_GET
def job_latency(request: HttpRequest, pk: int) -> JsonResponse:
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    return JsonResponse(charts.job_latency(job, charts.window(request.GET.get("minutes", 60))))
