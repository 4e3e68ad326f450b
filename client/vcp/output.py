"""Printing answers: a table for people, JSON or YAML for scripts (--output)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click
import yaml

FORMATS = ("table", "json", "yaml")


def emit(data: Any, fmt: str, columns: Sequence[str] = ()) -> None:
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, default=str))
    elif fmt == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip())
    elif isinstance(data, list):
        click.echo(table(data, columns))
    elif isinstance(data, dict):
        shown = {k: v for k, v in data.items() if not columns or k in columns}
        width = max((len(k) for k in shown), default=0)
        for key, value in shown.items():
            click.echo(f"{key.ljust(width)}  {cell(value)}")
    else:
        click.echo(str(data))


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    columns = list(columns) or (list(rows[0]) if rows else [])
    cells = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c.upper())] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


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
