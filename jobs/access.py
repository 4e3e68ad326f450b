"""Who may see and do what. Every query for a user's objects goes through here.

Another team's objects are invisible (callers turn that into 404, never 403, so ids leak
nothing). Roles: viewer reads; member also composes, submits and cancels; admin also manages.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from jobs.models import Job, Membership, Role, Team

SUBMIT_ROLES = (Role.ADMIN, Role.MEMBER)


def teams_of(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user).distinct()


def submit_teams(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user, memberships__role__in=SUBMIT_ROLES)


def visible_jobs(user: Any) -> QuerySet[Job]:
    return Job.objects.filter(team__in=teams_of(user)).select_related("team", "created_by")


def role_in(user: Any, team: Team) -> str | None:
    if not user.is_authenticated:
        return None
    membership = Membership.objects.filter(user=user, team=team).only("role").first()
    return membership.role if membership else None


def can_submit(user: Any, team: Team) -> bool:
    return role_in(user, team) in SUBMIT_ROLES


def can_manage(user: Any, team: Team) -> bool:
    """Admins manage a team: its members, channels, budgets and templates."""
    return role_in(user, team) == Role.ADMIN


def managed_teams(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user, memberships__role=Role.ADMIN)
