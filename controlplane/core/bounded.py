"""Parsing hostile input within bounds: every body, number and date a client sends.

A request body is at most ``CP_MAX_BODY_BYTES`` and nests at most ``MAX_JSON_DEPTH`` deep; a
number in it is finite (``1e400`` is refused, not read as infinity); a query parameter that is a
number or a date is checked here and refused with a 400 that names it, before the database sees
a value it cannot hold (an id beyond 64 bits, February 31st, year 0).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, time
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

# Deeper than any CustomJob (about a dozen levels) or job_spec_extra needs, far below the
# recursion that would fail somewhere later (copying, saving, rendering).
MAX_JSON_DEPTH = 32
# The largest value a PostgreSQL bigint (every primary key) holds.
MAX_ID = 2**63 - 1
# Any year a date-time can be written with (Python and PostgreSQL hold them all); a moment that
# leaves these years once turned into UTC is refused with the rest.
EARLIEST_YEAR, LATEST_YEAR = 1, 9999


class TooDeep(ValueError):
    """A JSON document nested deeper than MAX_JSON_DEPTH."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large (beyond a 64-bit float)")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def depth(value: Any) -> int:
    """How deep containers nest (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


# An unpaired surrogate (json.loads joins the paired ones) is no character: UTF-8 cannot
# encode it, so neither the database nor any response could hold it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_nul(value: Any) -> bool:
    """Whether any string in a parsed document (keys included) holds U+0000, which PostgreSQL
    cannot store in text or jsonb, or an unpaired surrogate, which no UTF-8 text can hold."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "\x00" in node or _LONE_SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def check_depth(value: Any, what: str = "the document") -> Any:
    if depth(value) > MAX_JSON_DEPTH:
        raise TooDeep(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def loads(text: str | bytes) -> Any:
    """json.loads that refuses NaN, Infinity, numbers beyond a float and deep nesting.

    The depth is checked on the text before parsing, so a document of a million ``[`` costs
    one pass over it, not Python's recursion."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    _shallow_text(text)
    value = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    if has_nul(value):
        raise ValueError("strings cannot contain the NUL character (\\u0000) or an unpaired "
                         "surrogate (\\ud800-\\udfff)")
    return check_depth(value)


def _shallow_text(text: str) -> None:
    level, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            if level > MAX_JSON_DEPTH:
                raise TooDeep(f"the document nests deeper than {MAX_JSON_DEPTH} levels")
        elif char in "]}":
            level -= 1


def max_body_bytes() -> int:
    return int(getattr(settings, "CP_MAX_BODY_BYTES", 1_000_000))


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the bounds above: a body too large, too deep or with a number no
    float holds is a 400 that says which, never a server error."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = max_body_bytes()
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ParseError(f"the request body is larger than {limit} bytes")
        if not raw:
            raise ParseError("JSON parse error - the body is empty")
        try:
            return loads(raw)
        except TooDeep as exc:
            raise ParseError(str(exc)) from exc
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


def int_param(params: Mapping[str, Any], name: str, default: Any = None, *,
              minimum: int = 0, maximum: int = MAX_ID) -> Any:
    """A whole-number query parameter in [minimum, maximum], or a 400 naming it."""
    raw = params.get(name)
    if raw in (None, ""):
        return default
    text = str(raw).strip()
    if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 20:
        raise ValidationError({name: [f"a whole number from {minimum} to {maximum}"]})
    value = int(text)
    if not minimum <= value <= maximum:
        raise ValidationError({name: [f"a whole number from {minimum} to {maximum}"]})
    return value


def id_param(params: Mapping[str, Any], name: str) -> int | None:
    """An object id (a positive bigint) or None when absent."""
    return int_param(params, name, None, minimum=1)


def moment(name: str, raw: str) -> datetime:
    """An ISO 8601 date or date-time (a date: 00:00 UTC; no zone: UTC), or a 400 naming it."""
    problem = {name: ["an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z) "
                      f"from {EARLIEST_YEAR} to {LATEST_YEAR}"]}
    text = (raw or "").strip()
    if len(text) > 64:
        raise ValidationError(problem)
    try:
        value = parse_datetime(text)
        if value is None:
            day = parse_date(text)
            if day is None:
                raise ValidationError(problem)
            value = datetime.combine(day, time.min)
        if timezone.is_naive(value):
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise ValidationError(problem) from exc
    if not EARLIEST_YEAR <= value.year <= LATEST_YEAR:
        raise ValidationError(problem)
    return value


class RefuseNulMiddleware:
    """A 400 for a request whose path, query or form fields hold a NUL character: no field of
    this application can hold one, and the database refuses it (a server error, otherwise)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        from django.http import JsonResponse

        raw = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path:
            return JsonResponse({"detail": "NUL characters are not accepted in a URL"},
                                status=400)
        if "%00" in raw or "\x00" in raw:
            # Named by the parameter that holds one, as any other refused filter value is.
            named = {(key if "\x00" not in key else "query"): ["NUL characters are not accepted"]
                     for key, values in request.GET.lists()
                     if "\x00" in key or any("\x00" in value for value in values)}
            return JsonResponse(named or {"detail": "NUL characters are not accepted in a URL"},
                                status=400)
        return self.get_response(request)
