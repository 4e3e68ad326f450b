"""What a team's clusters hold, for the queue in front of Vertex (controlplane/runs/holders.py):
each persistent resource's accelerators at the most replicas its pools may scale to, from its
creation (Vertex provisions, and bills, from then) until it is deleted."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from controlplane.clusters.models import Cluster
from controlplane.runs import holders
from controlplane.runs.holders import Held
from vertexplan import quota as plan_quota


def held_since(since: datetime) -> list[Held]:
    out = []
    # A cluster that failed never held what it asked for.
    clusters = (Cluster.objects.exclude(state=Cluster.State.FAILED)
                .filter(Q(deleted_at__isnull=True) | Q(deleted_at__gte=since))
                .select_related("team").order_by("pk"))
    for cluster in clusters:
        demand = holders.demand(plan_quota.resource_needs(cluster.resource or {}),
                                cluster.region)
        if demand:
            until = cluster.deleted_at if cluster.state == Cluster.State.DELETED else None
            out.append(Held(f"cluster-{cluster.pk}", cluster.team.slug, demand,
                            cluster.created_at, until))
    return out
