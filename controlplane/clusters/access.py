"""Who sees and changes clusters and Ray jobs: the same rules as jobs (controlplane/teams).
Another team's clusters are invisible (404); viewers read, members and admins change."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from controlplane.clusters.models import Cluster, RayJob
from controlplane.teams import access


def visible_clusters(user: Any) -> QuerySet[Cluster]:
    return Cluster.objects.filter(team__in=access.teams_of(user)).select_related("team")


def visible_ray_jobs(user: Any) -> QuerySet[RayJob]:
    return RayJob.objects.filter(team__in=access.teams_of(user)).select_related(
        "team", "cluster")


can_change = access.can_submit
