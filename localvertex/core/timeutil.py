"""Timestamps: RFC 3339 text, integer nanoseconds (how the emulator stores time) and protobuf."""

from __future__ import annotations

import calendar
import re
import threading
import time

from google.protobuf import timestamp_pb2

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9})\d*)?)?)?"
    r"\s*([Zz]|[+-]\d{2}:?\d{2})?$"
)


def parse_rfc3339_ns(text: str) -> int:
    """Nanoseconds since the epoch for an RFC 3339 time; a missing zone means UTC."""
    m = _RFC3339.match(text.strip())
    if not m:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    year, month, day, hour, minute, second, frac, zone = m.groups()
    seconds = calendar.timegm(
        (int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    )
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    nanos = int((frac or "").ljust(9, "0")) if frac else 0
    return seconds * 1_000_000_000 + nanos


def format_rfc3339(ns: int) -> str:
    seconds, nanos = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{base}.{nanos:09d}Z"


def to_timestamp(ns: int) -> timestamp_pb2.Timestamp:
    seconds, nanos = divmod(ns, 1_000_000_000)
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


def from_timestamp(ts: timestamp_pb2.Timestamp) -> int:
    return ts.seconds * 1_000_000_000 + ts.nanos


class MonotonicClock:
    """Wall-clock nanoseconds that never repeat or go backwards within this process.

    Log entries get the time their line was read; two lines read in the same nanosecond (or a
    clock step backwards) would otherwise tie or reorder.
    """

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def now_ns(self) -> int:
        with self._lock:
            self._last = max(time.time_ns(), self._last + 1)
            return self._last
