"""Reading scalar values the way Vertex's REST (proto3 JSON) parser reads them.

Proto3 JSON writes int64 as a string ("replicaCount": "1") and accepts a number too; int32
fields are usually numbers but strings are accepted as well; enums are names or their numbers;
Durations are strings of seconds with an "s" suffix ("172800s", "1.5s"). Each reader returns
None for a value Vertex would refuse, so the caller can say why in its own words.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from decimal import Decimal

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# google.protobuf.Duration's range: +-10,000 years.
DURATION_MAX_SECONDS = 315_576_000_000

_INT_RE = re.compile(r"-?\d+")
_DURATION_RE = re.compile(r"(-?)(\d+)(\.\d{1,9})?s")


def as_int(value: object, *, bits: int = 64) -> int | None:
    """An integer from a JSON number or a decimal string; None for anything else.

    bool is refused although it is an int subclass in Python: `true` is not a count in JSON.
    A float is accepted only when it is whole (1.0), as proto3 JSON parsers do.
    """
    limit = INT64_MAX if bits == 64 else INT32_MAX
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        number = int(value)
    elif isinstance(value, str) and _INT_RE.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        return None
    return number if -limit - 1 <= number <= limit else None


def parse_duration(value: object) -> Decimal | None:
    """Seconds of a proto3 JSON Duration ("3600s", "0.5s"); None if malformed or out of range."""
    if not isinstance(value, str):
        return None
    match = _DURATION_RE.fullmatch(value.strip())
    if not match:
        return None
    sign, whole, fraction = match.groups()
    seconds = Decimal(whole + (fraction or ""))
    if seconds > DURATION_MAX_SECONDS:
        return None
    return -seconds if sign else seconds


def format_seconds(seconds: Decimal | int) -> str:
    """A human reading of a duration for messages: '7 days', '36 hours', '90 s'."""
    value = Decimal(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if value >= size and value % size == 0:
            count = int(value // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{value.normalize():f} s"


def enum_name(value: object, names: Collection[str], numbers: Mapping[int, str]) -> str | None:
    """The enum name for a JSON enum value given by name or by number; None if neither."""
    if isinstance(value, str):
        return value if value in names else None
    number = as_int(value, bits=32)
    return numbers.get(number) if number is not None else None
