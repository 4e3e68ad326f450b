"""Cluster pages: the team's clusters with what each costs per hour, and one cluster's pools,
state, cost while it exists and Ray jobs. Creating is the API's (and the command line's)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from controlplane.clusters import access, idle, lifecycle
from controlplane.clusters.models import Cluster
from vertexplan.clusters.cost import BILLING_NOTE


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
    })


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    cluster = get_object_or_404(access.visible_clusters(request.user), pk=pk)
    return render(request, "clusters/detail.html", {
        "cluster": cluster, "pools": cluster.request.get("pools", []),
        "ray_jobs": cluster.ray_jobs.all()[:50], "billing_note": BILLING_NOTE,
        "can_change": access.can_change(request.user, cluster.team),
        "idle_since": idle.idle_since(cluster), "idle_flagged": idle.flagged(cluster),
        "idle_limit_h": settings.CP_CLUSTER_IDLE_FLAG_S / 3600,
    })


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
