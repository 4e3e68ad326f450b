"""Secrets at rest (Slack webhook URLs and bot tokens, a team's W&B API key) are stored as
Fernet tokens.

The key is CP_ENCRYPTION_KEY when set (a Fernet key, or any string, hashed into one), else one
derived from SECRET_KEY. Values written under the SECRET_KEY-derived key stay readable after a
CP_ENCRYPTION_KEY is introduced (MultiFernet tries both), so turning it on needs no migration.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from controlplane.core.env import envsecret

# A Fernet key (or any secret, hashed into one); empty: derived from SECRET_KEY. A Django
# setting of the same name (tests set one) wins over the environment.
_ENV_KEY = envsecret("CP_ENCRYPTION_KEY")


class SecretUnreadable(Exception):
    """The stored secret was encrypted with a key this process does not have."""


def _fernet_key(secret: str, purpose: str) -> bytes:
    raw = secret.encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32 and len(raw) == 44:
            return raw  # already a Fernet key
    except (binascii.Error, ValueError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(f"{purpose}:{secret}".encode()).digest())


def _fernet() -> MultiFernet:
    keys = []
    configured = getattr(settings, "CP_ENCRYPTION_KEY", _ENV_KEY)
    if configured:
        keys.append(Fernet(_fernet_key(configured, "cp-encryption-key")))
    # The purpose string is as it was when only notifications kept secrets: values stored
    # then stay readable.
    keys.append(Fernet(_fernet_key(settings.SECRET_KEY, "cp-notifications-secret")))
    return MultiFernet(keys)


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("the secret cannot be decrypted with the configured key") from exc
