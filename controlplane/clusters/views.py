"""Cluster pages: the team's clusters with what each costs per hour, one cluster's pools, state,
cost while it exists and Ray jobs (and a form to submit one), and the create form, which shows
the price per hour before it creates anything."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from controlplane.clusters import access, dashboard, idle, lifecycle, ray_output
from controlplane.clusters.forms import ROWS_SHOWN, ClusterForm, RayJobForm, pool_formset
from controlplane.clusters.models import Cluster, RayJob
from controlplane.core import idempotency
from controlplane.teams import access as team_access
from vertexplan.clusters.cost import BILLING_NOTE
from vertexplan.digits import ascii_int


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    clusters = access.visible_clusters(request.user).exclude(
        state__in=[Cluster.State.DELETED, Cluster.State.FAILED])
    recent = access.visible_clusters(request.user).filter(
        state__in=[Cluster.State.DELETED, Cluster.State.FAILED])[:20]
    return render(request, "clusters/index.html", {
        "clusters": [(c, idle.flagged(c)) for c in clusters], "recent": recent,
        "billing_note": BILLING_NOTE,
        "hourly_total": sum(c.hourly_micros for c in clusters),
        "idle_limit_h": settings.CP_CLUSTER_IDLE_FLAG_S / 3600,
        "can_create": team_access.submit_teams(request.user).exists(),
    })


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    cluster = get_object_or_404(access.visible_clusters(request.user), pk=pk)
    return _detail(request, cluster, RayJobForm())


def _detail(request: HttpRequest, cluster: Cluster, ray_form: RayJobForm, *,
            status: int = 200) -> HttpResponse:
    ray_jobs = list(cluster.ray_jobs.all()[:50])
    newest = ray_jobs[0] if ray_jobs else None
    return render(request, "clusters/detail.html", {
        "cluster": cluster, "pools": cluster.request.get("pools", []),
        "ray_jobs": ray_jobs, "newest": newest,
        "output": ray_output.for_page(newest.logs) if newest and newest.logs else None,
        "dashboard_url": dashboard.url(cluster.dashboard_uri,
                                       emulated=bool(settings.VERTEX_EMULATOR_ADDR)),
        "billing_note": BILLING_NOTE,
        "can_change": access.can_change(request.user, cluster.team),
        "ray_form": ray_form,
        "idle_since": idle.idle_since(cluster), "idle_flagged": idle.flagged(cluster),
        "idle_flag": cluster.idle_flags.first(),
        "idle_limit_h": settings.CP_CLUSTER_IDLE_FLAG_S / 3600,
    }, status=status)


@login_required
@require_POST
def submit_ray_job(request: HttpRequest, pk: int) -> HttpResponse:
    """The cluster page's Ray job form: submitted by lifecycle.submit_ray_job, as the API
    submits one, once per form key; bad input is shown on the page's form, field by field."""
    cluster = get_object_or_404(access.visible_clusters(request.user), pk=pk)
    if not access.can_change(request.user, cluster.team):
        raise PermissionDenied("your role in this team cannot run Ray jobs on its clusters")
    form = RayJobForm(request.POST)
    if not form.is_valid():
        return _detail(request, cluster, form, status=400)
    submitted = _submit_once(request, cluster, form)
    if submitted is None:  # the form says why
        return _detail(request, cluster, form, status=400)
    ray_job, now = submitted
    if now:
        messages.success(request, f"Ray job {ray_job.submission_id} submitted to "
                                  f"{cluster.name}.")
    else:  # a second click, or the browser resending
        messages.info(request, f"This form was already submitted: Ray job "
                               f"{ray_job.submission_id}.")
    return redirect("clusters-detail", pk=cluster.pk)


def _submit_once(request: HttpRequest, cluster: Cluster,
                 form: RayJobForm) -> tuple[RayJob, bool] | None:
    """The Ray job the form asks for, submitted once per form key, and whether this request
    submitted it; None, with the errors on FORM, when nothing is submitted."""
    key = form.cleaned_data["idempotency_key"]
    with transaction.atomic():
        try:
            earlier = idempotency.claim(request.user, key, form.fingerprint(cluster.pk), request)
        except idempotency.KeyConflict:
            form.add_error(None, "this form was already used to submit another Ray job; "
                                 "reload the page to submit a new one")
            return None
        if earlier is not None:
            ray_job = RayJob.objects.filter(
                pk=(earlier.response_body or {}).get("ray_job")).first()
            if ray_job is None:
                form.add_error(None, "this form was already submitted; see the Ray jobs below")
                return None
            return ray_job, False
        try:
            ray_job = lifecycle.submit_ray_job(cluster=cluster, user=request.user,
                                               **form.ray_job())
        except lifecycle.ClusterError as exc:
            # Nothing is kept, the key neither: it stays free for the corrected form.
            transaction.set_rollback(True)
            form.attach(exc.fields)
            return None
        idempotency.store(request.user, key, 201, {"ray_job": ray_job.pk})
    return ray_job, True


@login_required
@require_POST
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    cluster = get_object_or_404(access.visible_clusters(request.user), pk=pk)
    if not access.can_change(request.user, cluster.team):
        raise PermissionDenied("your role in this team cannot change clusters")
    lifecycle.request_delete(cluster)
    messages.success(request, f"Cluster {cluster.name} is being deleted; it bills until "
                              "Vertex says it is gone.")
    return redirect("clusters-detail", pk=cluster.pk)


@login_required
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponseBase:
    """The form. A valid request is priced and shown with a button to create it at that price;
    only a POST that saw the current price creates, once per form key."""
    if not team_access.submit_teams(request.user).exists():
        raise PermissionDenied("your role in your teams cannot create clusters")
    if request.method == "GET":
        rows = request.GET.get("pools", "")
        wanted = ascii_int(rows, max_digits=2) or 0
        pools = pool_formset(rows=wanted or ROWS_SHOWN)
        return _render(request, ClusterForm(user=request.user), pools)
    form = ClusterForm(request.POST, user=request.user)
    pools = pool_formset(request.POST)
    if not (form.is_valid() and pools.is_valid()):
        return _render(request, form, pools, status=400)
    body, rows = form.cluster_request(pools)
    try:
        priced = lifecycle.price_cluster(body, form.cleaned_data["team"])
    except lifecycle.ClusterError as exc:
        form.attach(exc.fields, pools, rows)
        return _render(request, form, pools, status=400)
    if request.POST.get("action") != "create" or \
            request.POST.get("seen_hourly_micros") != str(priced.hourly_micros):
        # Not yet seen at this price (the first look, or the pools changed since): show it.
        return _render(request, form, pools, priced=priced)
    return _create_once(request, form, pools, body, rows)


def _create_once(request: HttpRequest, form: ClusterForm, pools: Any, body: dict[str, Any],
                 rows: list[int]) -> HttpResponseBase:
    key = form.cleaned_data["idempotency_key"]
    with transaction.atomic():
        try:
            earlier = idempotency.claim(request.user, key, form.fingerprint(body), request)
        except idempotency.KeyConflict:
            form.add_error(None, "this form was already used to create another cluster; "
                                 "reload the page to create a new one")
            return _render(request, form, pools, status=400)
        if earlier is not None:
            # A second click, or the browser resending: the first one's cluster.
            made = (earlier.response_body or {}).get("cluster")
            if made is None:
                form.add_error(None, "this form was already submitted; see your clusters")
                return _render(request, form, pools, status=400)
            return redirect("clusters-detail", pk=made)
        try:
            cluster = lifecycle.create_cluster(team=form.cleaned_data["team"],
                                               user=request.user, request=body)
        except lifecycle.ClusterError as exc:
            transaction.set_rollback(True)  # the key stays free for the corrected form
            form.attach(exc.fields, pools, rows)
            return _render(request, form, pools, status=400)
        idempotency.store(request.user, key, 201, {"cluster": cluster.pk})
    messages.success(request, f"Cluster {cluster.name} is being created; it bills from now "
                              "until it is deleted.")
    return redirect("clusters-detail", pk=cluster.pk)


def _render(request: HttpRequest, form: ClusterForm, pools: Any, *, status: int = 200,
            priced: Cluster | None = None) -> HttpResponse:
    return render(request, "clusters/create.html", {
        "form": form, "pools": pools, "priced": priced, "billing_note": BILLING_NOTE,
        "region": settings.VERTEX_REGION,
        "more_rows": min(len(pools.forms) + 2, 16),
    }, status=status)
