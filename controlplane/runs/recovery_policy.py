"""A job's recovery policy from its request: the site's defaults, and the request's optional
"recovery" object checked field by field (which field, why, what is valid).

    "recovery": {"strategy": "failover", "max_recoveries": 6, "retries_in_place": 2,
                 "tries_per_step": 2, "tries_per_region": 4,
                 "backoff_s": 10, "backoff_cap_s": 300,
                 "fallback": ["FLEX_START", "STANDARD"], "regions": ["us-east1"]}
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from django.conf import settings

from controlplane.backends.base import get_backend
from controlplane.runs.recovery import SCHEDULING_STRATEGIES, STRATEGIES, Policy
from vertexplan.composer import JobRequest

# Whole-number fields: (lowest, highest, what the range means when it needs saying).
WHOLE_RANGES: dict[str, tuple[int, int, str]] = {
    "max_recoveries": (0, 20, ""),
    "retries_in_place": (0, 10, ""),
    "tries_per_step": (1, 10, ""),
    "tries_per_region": (0, 50, " (0: no limit but the steps')"),
}
# Seconds: the first wait after a failure, and the most any wait grows to.
SECONDS_RANGES: dict[str, tuple[float, float]] = {
    "backoff_s": (0, 3600),
    "backoff_cap_s": (0, 86400),
}
FIELDS = ("strategy", *WHOLE_RANGES, *SECONDS_RANGES, "fallback", "regions")


def _site(name: str, default: str) -> str:
    value = getattr(settings, name, None)
    return str(value) if value is not None else os.environ.get(name, default)


def site_default(spot: bool) -> Policy:
    """What a job gets when its request says nothing: spot jobs recover, others do not.

    CP_RECOVERY_STRATEGY (failover), CP_MAX_RECOVERIES (3), CP_RECOVERY_FALLBACK (e.g.
    "FLEX_START,STANDARD"; empty: stay on SPOT), CP_RECOVERY_BACKOFF_S (10) and
    CP_RECOVERY_BACKOFF_CAP_S (300), from the settings or the environment.
    """
    backoff = float(_site("CP_RECOVERY_BACKOFF_S", "10"))
    cap = float(_site("CP_RECOVERY_BACKOFF_CAP_S", "300"))
    if not spot:
        return Policy(backoff_s=backoff, backoff_cap_s=cap)
    fallback = tuple(s.strip() for s in _site("CP_RECOVERY_FALLBACK", "").split(",")
                     if s.strip() in SCHEDULING_STRATEGIES)
    return Policy(strategy=_site("CP_RECOVERY_STRATEGY", "failover"),
                  max_recoveries=int(_site("CP_MAX_RECOVERIES", "3")), fallback=fallback,
                  backoff_s=backoff, backoff_cap_s=cap)


def whole_range_text(key: str) -> str:
    low, high, note = WHOLE_RANGES[key]
    return f"must be a whole number from {low} to {high}{note}"


def seconds_range_text(key: str) -> str:
    low, high = SECONDS_RANGES[key]
    return f"must be a number of seconds from {low:g} to {high:g}"


def _whole(raw: dict[str, Any], key: str, default: int,
           errors: dict[str, list[str]]) -> int:
    value = raw.get(key, default)
    low, high, _ = WHOLE_RANGES[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        errors.setdefault(f"recovery.{key}", []).append(whole_range_text(key))
        return default
    return value


def _seconds(raw: dict[str, Any], key: str, default: float,
             errors: dict[str, list[str]]) -> float:
    value = raw.get(key, default)
    low, high = SECONDS_RANGES[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not low <= value <= high:
        errors.setdefault(f"recovery.{key}", []).append(seconds_range_text(key))
        return default
    return float(value)


def _backoff(raw: dict[str, Any], base: Policy,
             errors: dict[str, list[str]]) -> tuple[float, float]:
    """(first wait, cap): a cap left out grows to the first wait given; one given below the
    first wait is refused."""
    first = _seconds(raw, "backoff_s", base.backoff_s, errors)
    if "backoff_cap_s" not in raw:
        return first, max(base.backoff_cap_s, first)
    cap = _seconds(raw, "backoff_cap_s", base.backoff_cap_s, errors)
    if "backoff_s" not in raw:
        first = min(first, cap)
    if cap < first and not errors.get("recovery.backoff_cap_s"):
        errors.setdefault("recovery.backoff_cap_s", []).append(
            f"must be at least backoff_s ({first:g} s): the cap on the wait")
    return first, cap


def _places(raw: dict[str, Any], request: JobRequest,
            errors: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    fallback = raw.get("fallback", [])
    if not isinstance(fallback, list) or any(s not in SCHEDULING_STRATEGIES for s in fallback):
        errors.setdefault("recovery.fallback", []).append(
            f"must be a list of {', '.join(SCHEDULING_STRATEGIES)}")
        fallback = []
    regions = raw.get("regions", [])
    if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
        errors.setdefault("recovery.regions", []).append("must be a list of region names")
        regions = []
    elif any(r != request.region for r in regions) and \
            not backend_can_change_region():
        errors.setdefault("recovery.regions", []).append(
            f"this backend submits to {settings.VERTEX_REGION} only")
    return fallback, regions


def parse_policy(request: JobRequest, *, spot: bool | None = None
                 ) -> tuple[Policy, dict[str, list[str]]]:
    """The policy of a job request's optional "recovery" object (the module's docstring), and
    errors keyed by field ("recovery.<field>"); fields left out take the site's defaults
    (those of a spot job when ``spot``, by default when the request asks for spot VMs)."""
    if spot is None:
        spot = request.scheduling == "SPOT" or bool(request.document.get("spot"))
    base = site_default(spot)
    raw = request.recovery
    if raw is None:
        return base, {}
    if not isinstance(raw, dict):
        return base, {"recovery": ["must be an object such as {\"strategy\": \"failover\"}"]}
    errors: dict[str, list[str]] = {}
    for key in sorted(set(raw) - set(FIELDS)):
        errors[f"recovery.{key}"] = [f"unknown field; valid: {', '.join(FIELDS)}"]
    strategy = raw.get("strategy", base.strategy or "failover")
    if strategy not in STRATEGIES:
        errors["recovery.strategy"] = [f"{strategy!r} is not a recovery strategy; valid: "
                                       f"{', '.join(sorted(STRATEGIES))}"]
    limits = {key: _whole(raw, key, default, errors) for key, default in (
        ("max_recoveries", base.max_recoveries or 3), ("retries_in_place",
         base.retries_in_place), ("tries_per_step", base.tries_per_step),
        ("tries_per_region", base.tries_per_region))}
    if errors.get("recovery.max_recoveries"):
        limits["max_recoveries"] = 0
    first, cap = _backoff(raw, base, errors)
    fallback, regions = _places(raw, request, errors)
    policy = replace(base, strategy=strategy, fallback=tuple(fallback), regions=tuple(regions),
                     backoff_s=first, backoff_cap_s=cap, **limits)
    return policy, errors


def backend_can_change_region() -> bool:
    return callable(getattr(get_backend(), "for_region", None))
