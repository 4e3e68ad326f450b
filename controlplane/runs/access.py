"""Which jobs a user sees: those of the teams controlplane/teams/access.py lets them see."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from controlplane.runs.models import Job, JobKind
from controlplane.teams.access import team_ids_here, teams_of


def visible_jobs(user: Any) -> QuerySet[Job]:
    """Every kind: a trial's or a Ray job's page, steps, events and logs read as any job's."""
    return _jobs_of(teams_of(user))


def visible_jobs_here(request: Any) -> QuerySet[Job]:
    """visible_jobs() of the request's user, filtered by the team ids the request already
    read (no subquery to build and run on every page)."""
    return _jobs_of(team_ids_here(request))


def _jobs_of(teams: Any) -> QuerySet[Job]:
    return Job.objects.filter(team__in=teams).select_related("team", "created_by")


def submitted_jobs(user: Any) -> QuerySet[Job]:
    """The visible jobs submitted through the job path: those that may be cancelled, cloned
    or resubmitted as jobs (a trial or a Ray job is changed through its sweep or cluster)."""
    return visible_jobs(user).filter(kind=JobKind.JOB)
