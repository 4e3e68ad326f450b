"""Making, finding and revoking API tokens. The key is shown once, when it is made."""

from __future__ import annotations

import functools
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
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
    """Make a token. A token never carries more than the credentials that made it:

    * its teams are among those the caller may act in now (with a narrowed token, among that
      token's teams the user still belongs to); none chosen means every team only for a
      session or an all-teams token, and all of the narrowed token's remaining teams otherwise;
      a narrowed caller with no team left makes no token at all;
    * a read-only caller makes only read-only tokens;
    * it expires no later than the token that made it (no expiry asked: the same expiry).
    """
    caller = scope.of(user)
    if caller is not None and caller.read_only and not read_only:
        raise ScopeError("read_only", "a read-only token makes only read-only tokens")
    if caller is not None and caller.expires_at is not None:
        if expires_at is None:
            expires_at = caller.expires_at
        elif expires_at > caller.expires_at:
            raise ScopeError("expires_at", "a token cannot outlive the token that makes it "
                             f"(which expires at {caller.expires_at.isoformat()})")
    if expires_at is not None and expires_at <= timezone.now():
        raise ScopeError("expires_at", "the expiry must be in the future")
    allowed = {team.slug: team for team in access.teams_of(user)}
    unknown = sorted(set(team_slugs) - set(allowed))
    if unknown:
        raise ScopeError("teams", f"not teams of yours: {', '.join(unknown)} (yours: "
                                  f"{', '.join(sorted(allowed)) or 'none'})")
    teams = [allowed[slug] for slug in sorted(set(team_slugs))]
    narrowed = caller is not None and caller.team_ids is not None
    all_teams = not teams and not narrowed
    if not teams and narrowed:
        teams = list(allowed.values())  # "all" from a narrowed token means all of its teams
        if not teams:
            raise ScopeError("teams", "the token making this one has no team left that you "
                                      "belong to")
    key = KEY_START + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name.strip()[:100] or "token",
                                        prefix=key[:PREFIX_LENGTH], key_hash=digest(key),
                                        expires_at=expires_at, read_only=read_only,
                                        all_teams=all_teams)
        token.teams.set(teams)
    return NewToken(token=token, key=key)


def find(key: str) -> ApiToken | None:
    """The active token with this key, or None. The lookup is by hash: the key itself is
    never compared, so its timing reveals nothing about stored keys."""
    if not key.startswith(KEY_START):
        return None
    if connection.vendor == "postgresql":
        token = _looked_up(digest(key))
    else:
        token = ApiToken.objects.select_related("user").filter(key_hash=digest(key)).first()
    if token is None or not token.active or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


@functools.cache
def _lookup_statement() -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """On PostgreSQL, the token by its hash with its user and its team ids (an ARRAY subquery)
    in one statement, written once per process, and the fields its columns fill. Every API
    request authenticates: the ORM compiled the same query each time (select_related's
    columns, the subquery, first()'s ordering) in several times the query's own round trip."""
    user_model = ApiToken._meta.get_field("user").related_model
    quote, teams = connection.ops.quote_name, ApiToken._meta.get_field("teams")
    table, users = quote(ApiToken._meta.db_table), quote(user_model._meta.db_table)
    token_fields, user_fields = ApiToken._meta.concrete_fields, user_model._meta.concrete_fields
    columns = [f"{table}.{quote(f.column)}" for f in token_fields] + \
              [f"{users}.{quote(f.column)}" for f in user_fields]
    token_id = f"{table}.{quote(ApiToken._meta.pk.column)}"
    team_ids = (f"ARRAY(SELECT {quote(teams.m2m_reverse_name())} "
                f"FROM {quote(teams.m2m_db_table())} "
                f"WHERE {quote(teams.m2m_column_name())} = {token_id})")
    statement = (f"SELECT {', '.join(columns)}, {team_ids} FROM {table} "
                 f"JOIN {users} ON {users}.{quote(user_model._meta.pk.column)} = "
                 f"{table}.{quote(ApiToken._meta.get_field('user').column)} "
                 f"WHERE {table}.{quote('key_hash')} = %s")
    return (statement, tuple(f.attname for f in token_fields),
            tuple(f.attname for f in user_fields))


def _looked_up(key_hash: str) -> ApiToken | None:
    statement, token_fields, user_fields = _lookup_statement()
    with connection.cursor() as cursor:
        cursor.execute(statement, [key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(token_fields)
    token = ApiToken.from_db(connection.alias, token_fields, row[:split])
    user_model = ApiToken._meta.get_field("user").related_model
    user = user_model.from_db(connection.alias, user_fields,
                              row[split:split + len(user_fields)])
    ApiToken._meta.get_field("user").set_cached_value(token, user)  # as select_related does
    token.team_id_list = row[-1]
    return token


def team_ids(token: ApiToken) -> frozenset[int]:
    """The ids of the teams a token is narrowed to (none for an all-teams token)."""
    read = getattr(token, "team_id_list", None)
    if read is not None:
        return frozenset(read)
    return frozenset(token.teams.values_list("pk", flat=True))


def may_revoke(user: Any, token: ApiToken) -> bool:
    """A session or a whole token revokes any of the user's tokens; a narrowed token only
    those within its own teams, and a read-only token none (a leaked read-only key must not
    be able to cut off the user's other scripts)."""
    caller = scope.of(user)
    if caller is None or (caller.team_ids is None and not caller.read_only):
        return True
    if token.all_teams:
        return False
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
