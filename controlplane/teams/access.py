"""Who may see and do what. Every query for a user's objects goes through here.

Another team's objects are invisible (callers turn that into 404, never 403, so ids leak
nothing). Roles: viewer reads; member also composes, submits and cancels; admin also manages.
A request made with a narrowed API token (controlplane/teams/scope.py) sees only the token's teams,
and a read-only token acts as a viewer in them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from controlplane.teams import scope
from controlplane.teams.models import Membership, Role, Team

SUBMIT_ROLES = (Role.ADMIN, Role.MEMBER)


def _scoped(user: Any, teams: QuerySet[Team], *, writes: bool = False) -> QuerySet[Team]:
    narrowed = scope.of(user)
    if narrowed is None:
        return teams
    if writes and narrowed.read_only:
        return teams.none()
    if narrowed.team_ids is not None:
        teams = teams.filter(pk__in=narrowed.team_ids)
    return teams


def teams_of(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return _scoped(user, Team.objects.filter(memberships__user=user).distinct())


def outside_credential_scope(user: Any, slug: str) -> bool:
    """Whether the user is in team SLUG but the request's token is narrowed away from it."""
    narrowed = scope.of(user)
    if narrowed is None or narrowed.team_ids is None or not user.is_authenticated:
        return False
    return Team.objects.filter(slug=slug, memberships__user=user).exclude(
        pk__in=narrowed.team_ids).exists()


def submit_teams(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return _scoped(user, Team.objects.filter(memberships__user=user,
                                             memberships__role__in=SUBMIT_ROLES), writes=True)


def role_in(user: Any, team: Team) -> str | None:
    if not user.is_authenticated:
        return None
    narrowed = scope.of(user)
    if narrowed is not None and not narrowed.allows_team(team.pk):
        return None
    membership = Membership.objects.filter(user=user, team=team).only("role").first()
    if membership is None:
        return None
    if narrowed is not None and narrowed.read_only:
        return Role.VIEWER
    return membership.role


def can_submit(user: Any, team: Team) -> bool:
    return role_in(user, team) in SUBMIT_ROLES


def memberships_of(user: Any) -> list[Membership]:
    """The user's memberships with their teams, by team name (whatever a token narrows)."""
    if not user.is_authenticated:
        return []
    return list(Membership.objects.filter(user=user).select_related("team")
                .order_by("team__name"))


def memberships_here(request: Any) -> list[Membership] | None:
    """The request's user's memberships with their teams, by team name, read once per request
    (the navigation lists them; the job page's buttons ask the roles in them). None when the
    request's credentials are narrowed (a token's scope): their rights are asked one by one."""
    user = request.user
    if not user.is_authenticated or scope.of(user) is not None:
        return None
    if "_cp_memberships" not in request.__dict__:
        request.__dict__["_cp_memberships"] = memberships_of(user)
    return list(request.__dict__["_cp_memberships"])


def team_ids_here(request: Any) -> list[int] | QuerySet[Team]:
    """The teams the request's user sees, for a filter on team: their ids from the
    request's memberships (read once per request), or teams_of()'s query where the
    credentials are narrowed."""
    held = memberships_here(request)
    if held is None:
        return teams_of(request.user)
    return [m.team_id for m in held]


def can_submit_here(request: Any, team: Team) -> bool:
    """can_submit() for the request's user, asked once per team and request however many
    panels of a page ask (a role does not change halfway through a request)."""
    asked: dict[int, bool] = request.__dict__.setdefault("_cp_can_submit", {})
    if team.pk not in asked:
        held = memberships_here(request)
        asked[team.pk] = (can_submit(request.user, team) if held is None else
                          any(m.team_id == team.pk and m.role in SUBMIT_ROLES for m in held))
    return asked[team.pk]


def submits_somewhere_here(request: Any) -> bool:
    """Whether the request's user may submit to any team, asked once per request (the
    navigation and the job page's clone button both ask)."""
    if "_cp_submits" not in request.__dict__:
        held = memberships_here(request)
        request.__dict__["_cp_submits"] = (submit_teams(request.user).exists() if held is None
                                           else any(m.role in SUBMIT_ROLES for m in held))
    return bool(request.__dict__["_cp_submits"])


def can_manage(user: Any, team: Team) -> bool:
    """Admins manage a team: its members, channels, budgets and templates."""
    return role_in(user, team) == Role.ADMIN


def managed_teams(user: Any) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return _scoped(user, Team.objects.filter(memberships__user=user,
                                             memberships__role=Role.ADMIN), writes=True)
