"""REST API for a job's logs, step metrics and metric series.

GET /api/v1/jobs/<id>/logs/     lines oldest first (order=desc: newest first), paged with
                                limit/offset; filters severity (this level and above), q
                                (substring, any case), replica (task name), attempt; after=
                                <timestamp>,<insertId> continues after a line already seen
                                without counting through the ones before it.
GET /api/v1/jobs/<id>/metrics/  series by name (name=loss&name=lr...; default all four:
                                loss, lr, tokens_per_s, step_time_s, mfu), each as columns
                                attempt/step/timestamp/value; max_points thins long runs.
                                mfu (a fraction of the devices' peak) is null where it
                                cannot be computed, and its `reason` says why.
GET /api/v1/jobs/<id>/steps/    the step rows themselves, paged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core import bounded
from controlplane.core.pagination import MAX_WHOLE
from controlplane.logs import queries
from controlplane.logs.models import LogLine, StepMetric
from controlplane.runs import access as runs_access
from controlplane.runs.models import Job
from vertexplan.logparse.entries import SEVERITY_NUMBERS

MAX_POINTS = 20_000
# An ISO 8601 timestamp as a line's `timestamp` is written, a comma, and its insert_id.
AFTER_PATTERN = (r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3])"
                 r":[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9]),"
                 r"[!-~]{0,200}$")


class LogLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogLine
        fields = ["attempt", "timestamp", "severity", "replica", "message", "insert_id"]
        read_only_fields = fields


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = StepMetric
        fields = ["attempt", "step", "timestamp", "loss", "lr", "tokens_per_s", "step_time_s",
                  "span"]
        read_only_fields = fields


def visible_job(request: Request, pk: int) -> Job:
    """404 for a job outside the caller's teams: ids leak nothing."""
    return get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)


def _after(value: str) -> tuple[datetime, str]:
    stamp, _, insert_id = value.partition(",")
    try:
        moment = bounded.moment("after", stamp)
    except ValidationError as exc:
        raise ValidationError({"after": ["use <timestamp>,<insertId> of a line already seen"]}
                              ) from exc
    return moment, insert_id[:200]


LOG_PARAMETERS = [
    OpenApiParameter("severity", {"oneOf": [
        {"type": "string", "enum": list(SEVERITY_NUMBERS)},
        {"type": "string", "pattern": "^[0-9]{1,4}$"}]},
        description="DEBUG, INFO, WARNING, ERROR... (any case) or a number: that level and "
                    "above"),
    OpenApiParameter("q", str, description="substring of the message, any case"),
    OpenApiParameter("replica", str, description="task name, e.g. workerpool0-0"),
    OpenApiParameter("attempt", {"type": "integer", "minimum": 1, "maximum": MAX_WHOLE}),
    OpenApiParameter("order", str, enum=["asc", "desc"]),
    OpenApiParameter("after", {"type": "string", "pattern": AFTER_PATTERN},
                     description="<timestamp>,<insertId> of a line already seen: the lines "
                                 "after it"),
]


@extend_schema(parameters=LOG_PARAMETERS)
class JobLogs(generics.ListAPIView):
    serializer_class = LogLineSerializer

    def get_queryset(self) -> QuerySet[LogLine]:
        job = visible_job(self.request, self.kwargs["pk"])
        params = self.request.query_params
        try:
            log_filter = queries.LogFilter.from_params(params)
        except queries.BadFilter as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        lines = queries.log_lines(job, log_filter)
        descending = params.get("order", "asc").lower() == "desc"
        if params.get("after"):
            at, insert_id = _after(params["after"])
            if descending:
                lines = lines.filter(Q(timestamp__lt=at) | Q(timestamp=at, insert_id__lt=insert_id))
            else:
                lines = lines.filter(Q(timestamp__gt=at) | Q(timestamp=at, insert_id__gt=insert_id))
        if descending:
            lines = lines.order_by("-timestamp", "-insert_id")
        return lines


class JobSteps(generics.ListAPIView):
    serializer_class = StepSerializer

    def get_queryset(self) -> QuerySet[StepMetric]:
        job = visible_job(self.request, self.kwargs["pk"])
        return job.steps.order_by("attempt", "step", "timestamp")


class JobMetrics(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("name", str, many=True, enum=list(queries.ALL_SERIES)),
            OpenApiParameter("attempt", {"type": "integer", "minimum": 1, "maximum": MAX_WHOLE}),
            OpenApiParameter("max_points", {"type": "integer", "minimum": 1,
                                            "maximum": MAX_POINTS}),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, pk: int) -> Response:
        job = visible_job(request, pk)
        names = request.query_params.getlist("name") or list(queries.ALL_SERIES)
        unknown = sorted(set(names) - set(queries.ALL_SERIES))
        if unknown:
            raise ValidationError({"name": [f"unknown series {', '.join(unknown)}; valid: "
                                            f"{', '.join(queries.ALL_SERIES)}"]})
        attempt = _int_param(request, "attempt", None)
        limit = _int_param(request, "max_points", MAX_POINTS)
        if not 1 <= limit <= MAX_POINTS:
            raise ValidationError({"max_points": [f"between 1 and {MAX_POINTS}"]})
        rows = queries.points(job, attempt)
        thinned = queries.thin(rows, limit)
        return Response({
            "job": job.pk,
            "points": len(thinned),
            "thinned": len(thinned) < len(rows),
            "series": queries.series(thinned, names,
                                     queries.mfu(job) if "mfu" in names else None),
        })


def _int_param(request: Request, name: str, default: Any) -> Any:
    return bounded.int_param(request.query_params, name, default, minimum=1,
                              maximum=2**31 - 1)
