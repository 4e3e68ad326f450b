"""What a request's credentials narrow its user's rights to.

A session acts with all of its user's rights. An API token may be narrowed to some of the
user's teams and to reading only; authentication (controlplane/security/auth.py) attaches that
here, to the user object of the one request, and controlplane/teams/access.py applies it in every
check, so no view can forget it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

ATTRIBUTE = "_credential_scope"


@dataclass(frozen=True)
class Scope:
    team_ids: frozenset[int] | None  # None: every team of the user
    read_only: bool
    # When the credentials stop working (None: never); what they make may not outlive them.
    expires_at: datetime | None = None

    def allows_team(self, team_id: int) -> bool:
        return self.team_ids is None or team_id in self.team_ids


def attach(user: Any, scope: Scope) -> None:
    setattr(user, ATTRIBUTE, scope)


def of(user: Any) -> Scope | None:
    """The narrowing on this user for this request; None when there is none."""
    return getattr(user, ATTRIBUTE, None)
