"""google.monitoring.v3.MetricService ListTimeSeries over the emulator's replica metrics
(series.py), as Cloud Monitoring answers it for Vertex's training metrics:

- `name` is projects/PROJECT; `filter` must name exactly one `metric.type = "..."`, and may
  compare resource.type, resource.labels.* and metric.labels.* (=, !=, AND, OR, NOT);
- `interval.end_time` is required; points from start_time (end_time when unset, as for a
  gauge) to end_time, newest first, each a gauge point (start = end);
- view HEADERS leaves the points out; series are paged by page_size / page_token;
- aggregation: none or ALIGN_NONE only (anything else is refused: the emulator keeps raw
  samples and says so rather than answer with unaligned points).
Only the emulator's own replicas have series; other metric types answer no series.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable

import grpc
from google.api import metric_pb2
from google.cloud import monitoring_v3

from localvertex.core.errors import invalid
from localvertex.core.filters import And, Comparison, FilterError, Node, Not, Or, parse
from localvertex.core.timeutil import from_timestamp, to_timestamp
from localvertex.monitoring import series
from localvertex.monitoring.series import MetricStore, ReplicaSeries

SERVICE = "google.monitoring.v3.MetricService"

ListTimeSeriesRequest = monitoring_v3.ListTimeSeriesRequest.pb()
ListTimeSeriesResponse = monitoring_v3.ListTimeSeriesResponse.pb()
Point = monitoring_v3.Point.pb()
_Aligner = monitoring_v3.Aggregation.Aligner
_Reducer = monitoring_v3.Aggregation.Reducer
_HEADERS = monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.HEADERS

_PROJECT = re.compile(r"^projects/([^/]+)$")
MAX_PAGE_SIZE = 100_000

# A series as the filter sees it: field path -> value.
Fields = dict[tuple[str, ...], str]
Predicate = Callable[[Fields], bool]


def _fields(replica: ReplicaSeries, metric: str) -> Fields:
    return {
        ("metric", "type"): metric,
        ("resource", "type"): series.RESOURCE_TYPE,
        ("resource", "labels", "project_id"): replica.project,
        ("resource", "labels", "job_id"): replica.job_id,
        ("resource", "labels", "task_name"): replica.task_name,
        ("metric", "labels", "task_type"): replica.task_type,
        ("metric", "labels", "task_index"): replica.task_index,
    }


def _compile(node: Node) -> Predicate:
    if isinstance(node, And):
        terms = [_compile(t) for t in node.terms]
        return lambda f: all(t(f) for t in terms)
    if isinstance(node, Or):
        terms = [_compile(t) for t in node.terms]
        return lambda f: any(t(f) for t in terms)
    if isinstance(node, Not):
        term = _compile(node.term)
        return lambda f: not term(f)
    return _comparison(node)


def _comparison(c: Comparison) -> Predicate:
    path = tuple(c.path)
    known = path in (("metric", "type"), ("resource", "type")) or (
        len(path) == 3 and path[:2] in (("resource", "labels"), ("metric", "labels")))
    if not known:
        raise invalid(f"Invalid filter: the field {c.field!r} is not one ListTimeSeries "
                      "filters on (metric.type, resource.type, resource.labels.*, "
                      "metric.labels.*).")
    if c.op == "=":
        return lambda f: f.get(path, "") == c.value
    if c.op == "!=":
        return lambda f: f.get(path, "") != c.value
    raise invalid(f"Invalid filter: the operator {c.op!r} on {c.field!r} is not supported "
                  "(use = or !=).")


def compile_filter(text: str) -> tuple[str, Predicate]:
    """The one metric type the filter names, and its predicate over a series' fields."""
    try:
        node = parse(text)
    except FilterError as exc:
        raise invalid(f"Invalid filter: {exc}") from exc
    if node is None:
        raise invalid("filter is required and must name a metric.type.")
    types = [c.value for c in _comparisons(node)
             if tuple(c.path) == ("metric", "type") and c.op == "="]
    if len(set(types)) != 1:
        raise invalid("The filter must specify exactly one metric type: "
                      'metric.type = "...".')
    return types[0], _compile(node)


def _comparisons(node: Node) -> list[Comparison]:
    if isinstance(node, Comparison):
        return [node]
    if isinstance(node, Not):
        return _comparisons(node.term)
    return [c for term in node.terms for c in _comparisons(term)]


def _check_aggregation(request) -> None:
    agg = request.aggregation
    if agg.per_series_aligner not in (0, _Aligner.ALIGN_NONE) or \
            agg.cross_series_reducer not in (0, _Reducer.REDUCE_NONE) or agg.group_by_fields:
        raise invalid("The emulator's ListTimeSeries answers raw points only: leave "
                      "aggregation unset (or ALIGN_NONE).")


def _point(at_ns: int, value: float, integer: bool):
    stamp = to_timestamp(at_ns)
    point = Point()
    point.interval.end_time.CopyFrom(stamp)
    point.interval.start_time.CopyFrom(stamp)
    if integer:
        point.value.int64_value = int(value)
    else:
        point.value.double_value = value
    return point


class MetricService:
    def __init__(self, store: MetricStore) -> None:
        self.store = store

    def list_time_series(self, request, context: grpc.ServicerContext):
        match = _PROJECT.match(request.name)
        if not match:
            raise invalid(f"Invalid name {request.name!r}: use projects/PROJECT.")
        metric, predicate = compile_filter(request.filter)
        if not request.HasField("interval") or not request.interval.HasField("end_time"):
            raise invalid("interval.end_time is required.")
        end = from_timestamp(request.interval.end_time)
        start = (from_timestamp(request.interval.start_time)
                 if request.interval.HasField("start_time") else end)
        if start > end:
            raise invalid("interval.start_time must not be after interval.end_time.")
        _check_aggregation(request)
        size = min(request.page_size or MAX_PAGE_SIZE, MAX_PAGE_SIZE)
        key = hashlib.sha256(json.dumps([request.name, request.filter, start, end,
                                         request.view]).encode()).hexdigest()[:16]
        offset = _decode(request.page_token, key) if request.page_token else 0
        integer = metric in series.INT_METRICS
        found = []
        for replica, points in self.store.snapshot(match.group(1)):
            kept = [(t, v) for t, v in points.get(metric, ()) if start <= t <= end]
            if not kept or not predicate(_fields(replica, metric)):
                continue
            found.append((replica, kept))
        response = ListTimeSeriesResponse()
        for replica, kept in found[offset:offset + size]:
            ts = response.time_series.add()
            ts.metric.type = metric
            ts.metric.labels.update({"task_type": replica.task_type,
                                     "task_index": replica.task_index})
            ts.resource.type = series.RESOURCE_TYPE
            ts.resource.labels.update({"project_id": replica.project, "job_id": replica.job_id,
                                       "task_name": replica.task_name})
            ts.metric_kind = metric_pb2.MetricDescriptor.GAUGE
            ts.value_type = (metric_pb2.MetricDescriptor.INT64 if integer else
                             metric_pb2.MetricDescriptor.DOUBLE)
            ts.unit = "By" if integer else "1"
            if request.view != _HEADERS:
                # Newest first, as Cloud Monitoring returns them.
                ts.points.extend(_point(t, v, integer) for t, v in reversed(kept))
        if offset + size < len(found):
            response.next_page_token = _encode(offset + size, key)
        return response

    def methods(self) -> dict[str, tuple[object, object]]:
        return {"ListTimeSeries": (self.list_time_series, ListTimeSeriesRequest)}


def _encode(offset: int, key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "q": key}).encode()).decode()


def _decode(token: str, key: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        offset = int(data["o"])
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid("Invalid page_token.") from exc
    if data.get("q") != key or offset < 0:
        raise invalid("The page_token belongs to another query.")
    return offset

