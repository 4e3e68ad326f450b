"""REST API of sweeps: list and create, one sweep with its trials, validate, cancel, clone,
export (gcloud YAML, REST JSON) and import."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.idempotency import idempotent
from controlplane.runs.api import resolve_team
from controlplane.security import audit
from controlplane.sweeps import lifecycle, submission
from controlplane.sweeps.access import visible_sweeps
from controlplane.sweeps.models import Sweep
from controlplane.sweeps.serializers import SweepListSerializer, SweepSerializer
from controlplane.teams import access
from vertexplan.interop import ImportFailed
from vertexplan.sweeps import FORMATS, export, import_text

MAX_IMPORT_CHARS = 200_000


class SweepListCreate(generics.ListCreateAPIView):
    serializer_class = SweepListSerializer

    def get_queryset(self) -> QuerySet[Sweep]:
        sweeps = visible_sweeps(self.request.user)
        state = self.request.query_params.get("state")
        return sweeps.filter(state=state) if state else sweeps

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: SweepSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = request.data
        if not isinstance(body, dict):
            raise ValidationError({"non_field_errors": ["expected a JSON object"]})
        team = resolve_team(request.user, body.get("team"))
        request_body = {k: v for k, v in body.items() if k != "team"}
        try:
            sweep = submission.create_sweep(team=team, user=request.user, request=request_body)
        except submission.SweepRefused as exc:
            # A Response, not a ValidationError: a budget's figures stay integers.
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        audit.record(request, "sweep.submit", sweep)
        return Response(SweepSerializer(sweep, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class SweepDetail(generics.RetrieveAPIView):
    serializer_class = SweepSerializer

    def get_queryset(self) -> QuerySet[Sweep]:
        return visible_sweeps(self.request.user).prefetch_related("trials")


class SweepValidate(APIView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        body = request.data
        if not isinstance(body, dict):
            # Not a sweep at all (the schema's 400); a sweep Vertex would refuse is an answer.
            raise ValidationError({"non_field_errors": ["expected a JSON object"]})
        team = resolve_team(request.user, body["team"]) if body.get("team") else None
        checked = lifecycle.check({k: v for k, v in body.items() if k != "team"}, team)
        return Response({"valid": checked.ok, "errors": checked.errors,
                         "warnings": checked.composition.warnings,
                         "tuning_job": checked.composition.tuning_job if checked.ok else None})


def sweep_for_change(request: Request, pk: int, verb: str) -> Sweep:
    sweep = get_object_or_404(visible_sweeps(request.user), pk=pk)
    if not access.can_submit(request.user, sweep.team):
        raise PermissionDenied(f"your role in this team cannot {verb} sweeps")
    return sweep


class SweepCancel(APIView):
    @extend_schema(request=None, responses={202: SweepSerializer})
    def post(self, request: Request, pk: int) -> Response:
        sweep = sweep_for_change(request, pk, "cancel")
        if not lifecycle.request_cancel(sweep.pk):
            sweep.refresh_from_db()
            return Response({"state": [f"the sweep is already {sweep.state}"]},
                            status=status.HTTP_409_CONFLICT)
        audit.record(request, "sweep.cancel", sweep)
        sweep.refresh_from_db()
        return Response(SweepSerializer(sweep, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


class SweepClone(APIView):
    """The sweep's request as a body for POST /api/v1/sweeps/."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, pk: int) -> Response:
        sweep = get_object_or_404(visible_sweeps(request.user), pk=pk)
        return Response(lifecycle.clone_request(sweep))


class SweepExport(APIView):
    @extend_schema(parameters=[OpenApiParameter("fmt", str, enum=list(FORMATS))],
                   responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, pk: int) -> Response:
        sweep = get_object_or_404(visible_sweeps(request.user), pk=pk)
        fmt = request.query_params.get("fmt", "yaml")
        if fmt not in FORMATS:
            raise ValidationError({"fmt": [f"must be one of {', '.join(FORMATS)}"]})
        return Response({"format": fmt,
                         "text": export(sweep.tuning_job, fmt, region=sweep.region)})


class SweepImport(APIView):
    """A gcloud YAML or REST JSON tuning job -> the sweep request (nothing is created)."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        text = request.data.get("text") if isinstance(request.data, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ValidationError({"text": ["give the document to import as a string"]})
        if len(text) > MAX_IMPORT_CHARS:
            raise ValidationError({"text": [f"at most {MAX_IMPORT_CHARS} characters"]})
        try:
            imported = import_text(text, region=request.data.get("region") or "us-central1")
        except ImportFailed as exc:
            raise ValidationError({"text": [str(exc)]}) from None
        return Response({"request": imported.request, "errors": imported.errors,
                         "warnings": imported.warnings})
