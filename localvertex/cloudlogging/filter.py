"""Cloud Logging filters compiled to SQL over the `entries` table of store.py.

Supported (the subset the control plane uses, plus a little):
  resource.type, resource.labels.KEY, logName, insertId, severity, timestamp, labels.KEY,
  textPayload, jsonPayload.PATH  with  = != < <= > >=  and `:` (has: substring, or `:*` exists),
  joined by AND / OR / NOT / parentheses / newlines.
An OR of equalities on one field (hundreds of job ids) becomes a single `IN` over a JSON array,
so it stays one SQL parameter however long it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from localvertex.cloudlogging.entries import SEVERITIES, severity_number
from localvertex.core.filters import And, Comparison, FilterError, Node, Not, Or, parse
from localvertex.core.timeutil import parse_rfc3339_ns

MAX_FILTER_CHARS = 20_000

_COLUMNS = {
    "resource.type": "resource_type",
    "resource.labels.job_id": "job_id",
    "resource.labels.task_name": "task_name",
    "logName": "log_name",
    "log_name": "log_name",
    "insertId": "insert_id",
    "insert_id": "insert_id",
    "textPayload": "text_payload",
    "text_payload": "text_payload",
}
_SQL_OPS = {"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class SqlFilter:
    where: str  # a boolean SQL expression ("1" when the filter is empty)
    params: tuple[object, ...]


def compile_filter(text: str) -> SqlFilter:
    if len(text) > MAX_FILTER_CHARS:
        raise FilterError(f"filter is {len(text)} characters long; the limit is {MAX_FILTER_CHARS}")
    node = parse(text)
    if node is None:
        return SqlFilter("1", ())
    params: list[object] = []
    return SqlFilter(_compile(node, params), tuple(params))


@dataclass(frozen=True)
class _Target:
    sql: str
    kind: str  # "text", "severity", "timestamp", "json"


def _target(c: Comparison) -> _Target:
    path = c.path
    if c.field in _COLUMNS:
        return _Target(_COLUMNS[c.field], "text")
    if c.field == "severity":
        return _Target("severity", "severity")
    if c.field == "timestamp":
        return _Target("timestamp_ns", "timestamp")
    if len(path) == 3 and path[:2] == ("resource", "labels"):
        return _Target(f"json_extract(resource_labels, {_json_path(path[2:])})", "text")
    if len(path) == 2 and path[0] == "labels":
        return _Target(f"json_extract(labels, {_json_path(path[1:])})", "text")
    if len(path) >= 2 and path[0] in ("jsonPayload", "json_payload"):
        return _Target(f"json_extract(json_payload, {_json_path(path[1:])})", "json")
    raise FilterError(f"unsupported field {c.field!r} in the filter")


def _json_path(keys: tuple[str, ...]) -> str:
    for key in keys:
        if '"' in key or "'" in key or "\\" in key:
            raise FilterError(f"unsupported character in field name {key!r}")
    return "'$" + "".join(f'."{k}"' for k in keys) + "'"


def _value(c: Comparison, target: _Target) -> object:
    if target.kind == "severity":
        number = severity_number(c.value)
        if number is None:
            raise FilterError(
                f"unknown severity {c.value!r}; expected one of {', '.join(SEVERITIES)}"
            )
        return number
    if target.kind == "timestamp":
        try:
            return parse_rfc3339_ns(c.value)
        except ValueError as exc:
            raise FilterError(f"invalid timestamp in the filter: {c.value!r}") from exc
    if target.kind == "json" and not c.quoted:
        # jsonPayload.step>=100: compare numbers as numbers.
        try:
            return int(c.value)
        except ValueError:
            try:
                return float(c.value)
            except ValueError:
                pass
    return c.value


def _compile(node: Node, params: list[object]) -> str:
    if isinstance(node, Not):
        return f"(NOT COALESCE({_compile(node.term, params)}, 0))"
    if isinstance(node, And):
        return "(" + " AND ".join(_compile(t, params) for t in node.terms) + ")"
    if isinstance(node, Or):
        terms = _flatten_or(node)
        same = _single_field_equalities(terms)
        if same is not None:
            target = _target(same[0])
            values = [_value(c, target) for c in same]
            params.append(json.dumps(values))
            return f"({target.sql} IN (SELECT value FROM json_each(?)))"
        return "(" + " OR ".join(_compile(t, params) for t in terms) + ")"
    return _compile_comparison(node, params)


def _flatten_or(node: Or) -> list[Node]:
    out: list[Node] = []
    for term in node.terms:
        if isinstance(term, Or):
            out.extend(_flatten_or(term))
        else:
            out.append(term)
    return out


def _single_field_equalities(terms: list[Node]) -> list[Comparison] | None:
    if not all(isinstance(t, Comparison) and t.op == "=" for t in terms):
        return None
    comps = [t for t in terms if isinstance(t, Comparison)]
    if len({c.field for c in comps}) != 1:
        return None
    return comps


def _compile_comparison(c: Comparison, params: list[object]) -> str:
    target = _target(c)
    if c.op == ":":
        if target.kind in ("severity", "timestamp"):
            # Cloud Logging reads `severity:ERROR` as equality.
            params.append(_value(c, target))
            return f"({target.sql} = ?)"
        if c.value == "*" and not c.quoted:
            return f"({target.sql} IS NOT NULL)"
        params.append(c.value.lower())
        return f"(instr(lower(CAST({target.sql} AS TEXT)), ?) > 0)"
    if c.op not in _SQL_OPS:
        raise FilterError(f"unsupported operator {c.op!r} in the filter (at {c.field})")
    params.append(_value(c, target))
    return f"({target.sql} {_SQL_OPS[c.op]} ?)"
