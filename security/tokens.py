"""Making, finding and revoking API tokens. The key is shown once, when it is made."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone

from security.models import ApiToken

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


def create(user: Any, name: str, *, expires_at: Any = None) -> NewToken:
    key = KEY_START + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name.strip()[:100] or "token",
                                    prefix=key[:PREFIX_LENGTH], key_hash=digest(key),
                                    expires_at=expires_at)
    return NewToken(token=token, key=key)


def find(key: str) -> ApiToken | None:
    """The active token with this key, or None. The lookup is by hash: the key itself is
    never compared, so its timing reveals nothing about stored keys."""
    if not key.startswith(KEY_START):
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=digest(key)).first()
    if token is None or not token.active or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def revoke(token: ApiToken) -> bool:
    """Revoke a token; False when it was already revoked."""
    if token.revoked_at is not None:
        return False
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return True
