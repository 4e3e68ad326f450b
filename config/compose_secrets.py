"""The compose stack's secrets, made once by its one-shot `secret-key` service and kept in its
volumes across restarts (docker-compose.yml):

    /run/cp-secrets/secret_key       Django's SECRET_KEY                       (the app's)
    /run/cp-secrets/redis_password   Redis' password, REDIS_PASSWORD_FILE      (the app's)
    /run/redis/redis.conf            `requirepass` with that password          (Redis')
    /run/lv-token/token              the emulator's bearer token               (the app's and
                                     (localvertex/auth.py)                      the emulator's)

Each folder is a volume of its own, mounted only where its line says: the emulator never sees
the key or Redis' password, Redis never sees the key. Standard library only: it runs before
anything else of the project is configured.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

APP = Path("/run/cp-secrets")
REDIS = Path("/run/redis")
EMULATOR = Path("/run/lv-token")


def _write_once(path: Path, text: str, mode: int = 0o600) -> str:
    """PATH's text, written first (owner-only) when it does not exist yet."""
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(descriptor, "w") as out:
            out.write(text)
    os.chmod(path, mode)
    return path.read_text()


def main(app: Path = APP, redis: Path = REDIS, emulator: Path = EMULATOR) -> int:
    _write_once(app / "secret_key", secrets.token_urlsafe(50))
    password = _write_once(app / "redis_password", secrets.token_urlsafe(32))
    # Redis drops to its own user before it reads its configuration: readable by it, in a
    # volume that only Redis (and this service) mounts.
    _write_once(redis / "redis.conf", f"requirepass {password}\n", mode=0o644)
    _write_once(emulator / "token", secrets.token_urlsafe(32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
