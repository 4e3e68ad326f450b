"""New jobs from an existing one through the API: clone (the body to edit and submit) and
resubmit from one of its checkpoints."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.compose import submission, validation
from controlplane.compose.serializers import JobRequestSerializer
from controlplane.core.idempotency import idempotent
from controlplane.runs import access as runs_access
from controlplane.runs import api as runs_api
from controlplane.runs import lifecycle
from controlplane.runs.serializers import JobSerializer
from controlplane.security import audit


class JobClone(APIView):
    """The job's request as a body for POST /api/v1/jobs/: edit it and submit it."""

    @extend_schema(request=None, responses={200: inline_serializer(
        "JobCloneBody", {"name": serializers.CharField(), "team": serializers.CharField()})})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(runs_access.submitted_jobs(request.user), pk=pk)
        return Response(api_body(lifecycle.clone_request(job)))


def api_body(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored (normalised) request in the fields POST /api/v1/jobs/ accepts."""


    accepted = set(JobRequestSerializer().fields)
    body = {k: v for k, v in stored.items() if k in accepted}
    strategy = stored.get("scheduling_strategy")
    if strategy and "scheduling_strategy" not in accepted and "spot" in accepted:
        body["spot"] = strategy == "SPOT"
    return body


class ResubmitSerializer(serializers.Serializer):
    checkpoint_step = serializers.IntegerField(required=False, min_value=0,
                                               help_text="Default: the newest checkpoint.")
    name = serializers.CharField(required=False, max_length=100)


class JobResubmit(APIView):
    """A new job that starts from one of this job's checkpoints (the newest by default)."""

    @extend_schema(request=ResubmitSerializer, responses={201: JobSerializer})
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        job = runs_api.job_for_change(request, pk, "resubmit")
        body = ResubmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            new_job = submission.resubmit(
                job, user=request.user, name=body.validated_data.get("name", ""),
                checkpoint_step=body.validated_data.get("checkpoint_step"))
        except submission.ResubmitError as exc:
            raise ValidationError(validation.nested(exc.errors)) from exc
        audit.record(request, "job.resubmit", new_job,
                     detail={"from_job": job.pk, "step": new_job.resume_from_step})
        return Response(JobSerializer(new_job, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)
