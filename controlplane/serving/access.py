"""Who sees and changes serving objects: the same rules as jobs (controlplane/teams/access.py).
Another team's objects are invisible (404); viewers read, members and admins change."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from controlplane.teams import access


def visible_entries(user: Any) -> QuerySet[ModelEntry]:
    return ModelEntry.objects.filter(team__in=access.teams_of(user)).select_related("team", "job")


def visible_endpoints(user: Any) -> QuerySet[Endpoint]:
    return Endpoint.objects.filter(team__in=access.teams_of(user)).select_related("team")


def visible_deployments(user: Any) -> QuerySet[Deployment]:
    return Deployment.objects.filter(endpoint__team__in=access.teams_of(user)).select_related(
        "endpoint", "endpoint__team", "model_entry")


can_change = access.can_submit
