"""Vertex AI's ListCustomJobs filter (AIP-160), compiled to a predicate over CustomJob messages.

Supported: `display_name` (= != and `:` with `*` wildcards), `state` (= !=), `labels.KEY`
(= != and `labels.KEY:*` / `labels:KEY` for existence), `name`, and `create_time`,
`update_time`, `start_time`, `end_time` compared with RFC 3339 times; AND, OR, NOT, parentheses.
The same filter lists TrainingPipelines, whose states are PipelineState's (`states`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable

from google.cloud import aiplatform_v1

from localvertex.core.filters import And, Comparison, FilterError, Node, Not, Or, parse
from localvertex.core.timeutil import from_timestamp, parse_rfc3339_ns

Predicate = Callable[[object], bool]  # takes an aiplatform.v1 CustomJob (protobuf)

_TIME_FIELDS = ("create_time", "update_time", "start_time", "end_time")
_ORDER = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def compile_job_filter(text: str, states: type = aiplatform_v1.JobState) -> Predicate:
    """`states`: the enum whose names `state` compares with (JobState, or PipelineState)."""
    node = parse(text)
    if node is None:
        return lambda job: True
    return _compile(node, states)


def _compile(node: Node, states: type) -> Predicate:
    if isinstance(node, Not):
        inner = _compile(node.term, states)
        return lambda job: not inner(job)
    if isinstance(node, And):
        parts = [_compile(t, states) for t in node.terms]
        return lambda job: all(p(job) for p in parts)
    if isinstance(node, Or):
        parts = [_compile(t, states) for t in node.terms]
        return lambda job: any(p(job) for p in parts)
    return _comparison(node, states)


def _comparison(c: Comparison, states: type) -> Predicate:
    if c.field in ("display_name", "displayName", "name"):
        attr = "display_name" if c.field != "name" else "name"
        return _string(c, lambda job: getattr(job, attr))
    if c.field == "state":
        if c.op not in ("=", "!="):
            raise FilterError(f"state supports = and !=, not {c.op!r}")
        try:
            wanted = states[c.value]
        except KeyError as exc:
            raise FilterError(f"unknown state {c.value!r} in the filter") from exc
        if c.op == "=":
            return lambda job: job.state == wanted
        return lambda job: job.state != wanted
    if c.path[0] == "labels":
        if len(c.path) == 1 and c.op == ":":
            return lambda job: c.value in job.labels
        if len(c.path) == 2:
            key = c.path[1]
            if c.op == ":" and c.value == "*":
                return lambda job: key in job.labels
            return _string(c, lambda job: job.labels.get(key))
    if c.field in _TIME_FIELDS:
        if c.op not in _ORDER:
            raise FilterError(f"{c.field} supports comparisons, not {c.op!r}")
        try:
            bound = parse_rfc3339_ns(c.value)
        except ValueError as exc:
            raise FilterError(f"invalid time {c.value!r} for {c.field}") from exc
        compare = _ORDER[c.op]
        field = c.field

        def by_time(job: object) -> bool:
            if not job.HasField(field):  # type: ignore[attr-defined]
                return False
            return compare(from_timestamp(getattr(job, field)), bound)

        return by_time
    raise FilterError(f"unsupported field {c.field!r} in the filter")


def _string(c: Comparison, get: Callable[[object], str | None]) -> Predicate:
    if c.op == ":":
        pattern = c.value
        return lambda job: (v := get(job)) is not None and fnmatch.fnmatchcase(v, pattern)
    if c.op == "=":
        return lambda job: get(job) == c.value
    if c.op == "!=":
        return lambda job: get(job) != c.value
    raise FilterError(f"{c.field} supports =, != and :, not {c.op!r}")
