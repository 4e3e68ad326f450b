"""Printing answers: a table for people, JSON or YAML for scripts (--output)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import click
import yaml

FORMATS = ("table", "json", "yaml")
MONEY = "_micros"  # the API's money: integer micro-dollars in fields named *_micros
# Cloud Logging's LogSeverity numbers, as the API stores a line's severity (and --severity
# filters pushed lines by them).
SEVERITY = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400,
            "ERROR": 500, "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800}
SEVERITY_NAMES = {number: name for name, number in SEVERITY.items()}
# A column the table works out from the row: how long the job has run, or ran.
DURATION = "duration"


def emit(data: Any, fmt: str, columns: Sequence[str] = ()) -> None:
    """JSON and YAML as the API answered (money in integer micro-dollars, for scripts); a table
    for people: money in dollars, severities by name, nested objects one field a line."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, default=str))
    elif fmt == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip())
    elif isinstance(data, list):
        click.echo(table(data, columns))
    elif isinstance(data, dict):
        click.echo(fields(data, columns))
    else:
        click.echo(str(data))


def fields(data: dict[str, Any], columns: Sequence[str] = ()) -> str:
    """One `name  value` line per field, nested objects as dotted names."""
    shown = {k: v for k, v in _with_duration(data).items() if not columns or k in columns}
    lines = list(_flat(shown))
    width = max((len(name) for name, _ in lines), default=0)
    return "\n".join(f"{name.ljust(width)}  {value}".rstrip() for name, value in lines)


def _flat(data: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            yield from _flat(value, name)
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            yield from _flat({f"{key}[{i}]": v for i, v in enumerate(value)}, prefix)
        else:
            yield heading(name, upper=False), cell(value, str(key))


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    rows = [_with_duration(row) for row in rows]
    columns = list(columns) or (list(rows[0]) if rows else [])
    cells = [[cell(row.get(c), c) for c in columns] for row in rows]
    heads = [heading(c) for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
    # Money reads right-aligned, as in a spreadsheet.
    right = [c.endswith(MONEY) for c in columns]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) if r else v.ljust(w)
                        for v, w, r in zip(row, widths, right, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def heading(name: str, *, upper: bool = True) -> str:
    """A column's title: money fields lose their unit suffix and say dollars."""
    if name.endswith(MONEY):
        name = name[: -len(MONEY)] + " ($)"
    return name.upper() if upper else name


def cell(value: Any, key: str = "") -> str:
    if value is None:
        return "-"
    if key.endswith(MONEY) and isinstance(value, int) and not isinstance(value, bool):
        return dollars(value)
    if key == "severity" and isinstance(value, int):
        return SEVERITY_NAMES.get(value, str(value))
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(cell(v) for v in value) or "-"
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


def dollars(micros: int) -> str:
    """Integer micro-dollars as dollars: cents, or every digit for an amount under a cent."""
    amount = micros / 1_000_000
    if micros and abs(micros) < 10_000:
        return f"${amount:.6f}".rstrip("0")
    return f"${amount:,.2f}"


def duration(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _with_duration(row: dict[str, Any]) -> dict[str, Any]:
    """The row with how long it has run (until now while it runs), from started_at/ended_at."""
    started = _time(row.get("started_at"))
    if DURATION in row or started is None:
        return row
    ended = _time(row.get("ended_at")) or datetime.now(UTC)
    return {**row, DURATION: duration((ended - started).total_seconds())}


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def field_errors(errors: Any, prefix: str = "") -> list[str]:
    """A 400's body, keyed by field (nested objects or dotted paths), as `field: message` lines."""
    if isinstance(errors, dict):
        lines: list[str] = []
        for key, value in errors.items():
            name = "" if key in ("non_field_errors", "detail") else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            lines += field_errors(value, path)
        return lines
    if isinstance(errors, list):
        if all(not isinstance(e, dict | list) for e in errors):
            return [f"{prefix}: {e}" if prefix else str(e) for e in errors]
        lines = []
        for i, value in enumerate(errors):
            lines += field_errors(value, f"{prefix}[{i}]")
        return lines
    return [f"{prefix}: {errors}" if prefix else str(errors)]


def ending(what: str, row: dict[str, Any]) -> str:
    """The line `--wait` ends with: the state, how long it ran and what it was billed."""
    parts = [f"{what} ended {row.get('state')}"]
    ran = _with_duration(row).get(DURATION)
    if ran:
        parts.append(f"after {ran}")
    cost = row.get("cost") if isinstance(row.get("cost"), dict) else {}
    billed = cost.get("billed_micros", row.get("cost_micros"))
    if isinstance(billed, int):
        parts.append(f"billed {dollars(billed)}")
    return ", ".join(parts)
