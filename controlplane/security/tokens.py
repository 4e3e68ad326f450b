"""Making, finding and revoking API tokens. The key is shown once, when it is made."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from controlplane.security.models import ApiToken
from controlplane.teams import access, scope

# A recognisable start lets secret scanners (and people) spot a leaked key.
KEY_START = "cpt_"
PREFIX_LENGTH = len(KEY_START) + 8
# Writing last_used_at on every request would turn each read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    key: str  # the only time the whole key exists outside the caller's hands


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ScopeError(ValueError):
    """A token asked for rights its maker does not have; `field` names what to change."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def create(user: Any, name: str, *, expires_at: Any = None, team_slugs: Any = (),
           read_only: bool = False) -> NewToken:
    """Make a token. Its teams must be among those the caller may act in now (with a narrowed
    token, among that token's), and a read-only caller makes only read-only tokens: a token
    never carries more than the credentials that made it."""
    caller = scope.of(user)
    if caller is not None and caller.read_only and not read_only:
        raise ScopeError("read_only", "a read-only token makes only read-only tokens")
    allowed = {team.slug: team for team in access.teams_of(user)}
    unknown = sorted(set(team_slugs) - set(allowed))
    if unknown:
        raise ScopeError("teams", f"not teams of yours: {', '.join(unknown)} (yours: "
                                  f"{', '.join(sorted(allowed)) or 'none'})")
    teams = [allowed[slug] for slug in sorted(set(team_slugs))]
    if not teams and caller is not None and caller.team_ids is not None:
        teams = list(allowed.values())  # "all" from a narrowed token means all of its teams
    key = KEY_START + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name.strip()[:100] or "token",
                                        prefix=key[:PREFIX_LENGTH], key_hash=digest(key),
                                        expires_at=expires_at, read_only=read_only)
        token.teams.set(teams)
    return NewToken(token=token, key=key)


def find(key: str) -> ApiToken | None:
    """The active token with this key, or None. The lookup is by hash: the key itself is
    never compared, so its timing reveals nothing about stored keys."""
    if not key.startswith(KEY_START):
        return None
    token = (ApiToken.objects.select_related("user").prefetch_related("teams")
             .filter(key_hash=digest(key)).first())
    if token is None or not token.active or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def may_revoke(user: Any, token: ApiToken) -> bool:
    """A session or a whole token revokes any of the user's tokens; a narrowed token only
    those within its own teams, and a read-only token none (a leaked read-only key must not
    be able to cut off the user's other scripts)."""
    caller = scope.of(user)
    if caller is None or (caller.team_ids is None and not caller.read_only):
        return True
    if caller.read_only:
        return False
    own = {team.pk for team in token.teams.all()}
    return bool(own) and own <= caller.team_ids


def revoke(token: ApiToken) -> bool:
    """Revoke a token; False when it was already revoked."""
    if token.revoked_at is not None:
        return False
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return True
