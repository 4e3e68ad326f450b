"""Which sweeps a user sees: those of the teams controlplane/teams/access.py lets them see."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from controlplane.sweeps.models import Sweep
from controlplane.teams.access import teams_of


def visible_sweeps(user: Any) -> QuerySet[Sweep]:
    return Sweep.objects.filter(team__in=teams_of(user)).select_related("team", "created_by")
