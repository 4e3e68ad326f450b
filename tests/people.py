"""Users for tests, each in a team with a role."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from controlplane.teams.models import Membership, Team


def make_user(name: str, team: Team, role: str) -> Any:
    # No password: tests log in with force_login or a token, and hashing one is slow.
    user = get_user_model().objects.create_user(username=name)
    Membership.objects.create(user=user, team=team, role=role)
    return user
