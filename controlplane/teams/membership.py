"""Team membership: who is in a team and with which role. The one place that changes it.

Team admins add people, change roles and remove people. A team always keeps at least one admin:
the change that would leave it with none is refused (someone must be able to manage it), and
the check holds under concurrent requests because it locks the team's admin rows first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from controlplane.teams.models import Membership, Role, Team

ROLES = [choice.value for choice in Role]


@dataclass
class MembershipError(Exception):
    """A refused change, named by the field a form or an API body would show it on."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def _role(role: str) -> str:
    if role not in ROLES:
        raise MembershipError("role", f"{role!r} is not a role; one of: {', '.join(ROLES)}")
    return role


def _keeps_an_admin(team: Team, leaving: Membership) -> bool:
    admins = list(Membership.objects.select_for_update()
                  .filter(team=team, role=Role.ADMIN).values_list("pk", flat=True))
    return any(pk != leaving.pk for pk in admins)


def add(team: Team, username: str, role: str) -> Membership:
    role = _role(role)
    username = (username or "").strip()
    if not username:
        raise MembershipError("username", "name the user to add")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise MembershipError("username", f"no user is named {username!r}")
    with transaction.atomic():
        if Membership.objects.filter(team=team, user=user).exists():
            raise MembershipError("username", f"{username} is already in team {team.slug}; "
                                              "change their role instead")
        return Membership.objects.create(team=team, user=user, role=role)


def change_role(membership: Membership, role: str) -> bool:
    """Set the role; False when it already was that role (nothing changed)."""
    role = _role(role)
    if membership.role == role:
        return False
    with transaction.atomic():
        if membership.role == Role.ADMIN and not _keeps_an_admin(membership.team, membership):
            raise MembershipError("role", f"{membership.user.username} is the last admin of "
                                          f"team {membership.team.slug}; make another member "
                                          "admin first")
        membership.role = role
        membership.save(update_fields=["role"])
    return True


def remove(membership: Membership) -> None:
    with transaction.atomic():
        if membership.role == Role.ADMIN and not _keeps_an_admin(membership.team, membership):
            raise MembershipError("username", f"{membership.user.username} is the last admin "
                                              f"of team {membership.team.slug}; make another "
                                              "member admin first")
        membership.delete()


def describe(membership: Membership) -> dict[str, Any]:
    """What the audit log keeps of a membership: who, and the role."""
    return {"username": membership.user.username, "role": membership.role}
