"""Things done to one job through the API: cancel, clone, resubmit from a checkpoint, and its
attempts and restarts."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import access, lifecycle, requests
from jobs.api.serializers import JobSerializer
from jobs.history import JobRestart
from jobs.models import Job, JobAttempt
from security import audit


def _job_for_change(request: Request, pk: int, verb: str) -> Job:
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied(f"your role in this team cannot {verb} jobs")
    return job


class JobCancel(APIView):
    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = _job_for_change(request, pk, "cancel")
        if not lifecycle.request_cancel(job.pk):
            raise ValidationError({"state": [f"the job is already {job.state}"]})
        audit.record(request, "job.cancel", job)
        job.refresh_from_db()
        return Response(JobSerializer(job, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


class JobClone(APIView):
    """The job's request as a body for POST /api/v1/jobs/: edit it and submit it."""

    @extend_schema(request=None, responses={200: inline_serializer(
        "JobCloneBody", {"name": serializers.CharField(), "team": serializers.CharField()})})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
        audit.record(request, "job.clone", job)
        return Response(api_body(lifecycle.clone_request(job)))


def api_body(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored (normalised) request in the fields POST /api/v1/jobs/ accepts."""
    from jobs.api.serializers import JobRequestSerializer

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
    def post(self, request: Request, pk: int) -> Response:
        job = _job_for_change(request, pk, "resubmit")
        body = ResubmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            new_job = lifecycle.resubmit(
                job, user=request.user, name=body.validated_data.get("name", ""),
                checkpoint_step=body.validated_data.get("checkpoint_step"))
        except lifecycle.ResubmitError as exc:
            raise ValidationError(requests.nested(exc.errors)) from exc
        audit.record(request, "job.resubmit", new_job,
                     detail={"from_job": job.pk, "step": new_job.resume_from_step})
        return Response(JobSerializer(new_job, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class AttemptDetailSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobAttempt
        fields = ["number", "reason", "display_name", "vertex_name", "vertex_state",
                  "scheduling", "region", "not_before", "submitted_at", "started_at",
                  "ended_at", "error_code", "error_message", "failure", "resume_step",
                  "resume_checkpoint"]
        read_only_fields = fields


class RestartSerializer(serializers.ModelSerializer):
    checkpoint_step = serializers.IntegerField(source="checkpoint.step", read_only=True,
                                               allow_null=True, default=None)

    class Meta:
        model = JobRestart
        fields = ["attempt", "replica", "ordinal", "cause", "signal", "occurred_at",
                  "detected_at", "step", "checkpoint_path", "resumed_at", "resumed_from_step",
                  "resumed_from_path", "checkpoint_step", "steps_lost", "sources"]
        read_only_fields = fields


class _OfOneJob(generics.ListAPIView):
    related_name = ""

    def get_queryset(self) -> QuerySet[Any]:
        job = get_object_or_404(access.visible_jobs(self.request.user), pk=self.kwargs["pk"])
        return getattr(job, self.related_name).all()


class JobAttempts(_OfOneJob):
    """Every attempt (one CustomJob each): why it was made, where it ran, how it ended."""

    serializer_class = AttemptDetailSerializer
    related_name = "attempts"


class JobRestarts(_OfOneJob):
    """Every preemption and restart detected, with the checkpoint it resumed from."""

    serializer_class = RestartSerializer
    related_name = "restart_records"

    def get_queryset(self) -> QuerySet[Any]:
        return super().get_queryset().select_related("checkpoint")
