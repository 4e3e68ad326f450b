"""Settings from the environment, validated at start-up.

A bad value stops the process with a message naming the variable, instead of failing at first
use deep inside a worker.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

from vertexplan.digits import ascii_int


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envsecret(name: str, default: str = "") -> str:
    """A secret from NAME, or from the file named by NAME_FILE (Docker/Kubernetes secrets)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc}") from exc
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use true or false")


def envint(name: str, default: int, *, minimum: int | None = None,
           maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} is above the maximum of {maximum}")
    return value


def envfloat(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}")
    return value


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name) or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}")
    return value


def envurl(name: str, default: str, schemes: tuple[str, ...]) -> str:
    value = os.environ.get(name) or default
    scheme = urlparse(value).scheme
    if scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name}={value!r} has scheme {scheme!r}; expected one of: {', '.join(schemes)}"
        )
    return value


RATE_PERIODS = ("second", "minute", "hour", "day")


def envrate(name: str, default: str) -> str:
    """A rate limit as '<count>/<period>' (period: second, minute, hour or day); empty or
    'off' turns the limit off."""
    value = (os.environ.get(name) or default).strip()
    if value.lower() in {"", "off", "none"}:
        return ""
    count, _, period = value.partition("/")
    if not ascii_int(count) or period not in RATE_PERIODS:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a rate: use <count>/<period>, period one of "
            f"{', '.join(RATE_PERIODS)} (e.g. 600/minute), or off")
    return value
