"""GET /api/v1/jobs/<id>/system/: a job's system metrics per replica (runs/system_metrics.py),
for scripts and `vcp jobs top`."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.runs import access as runs_access
from controlplane.runs import system_metrics
from vertexplan.digits import ascii_int


class SystemSampleSerializer(serializers.Serializer):
    at = serializers.DateTimeField(allow_null=True)
    cpu_percent = serializers.FloatField(
        allow_null=True, help_text="share of the machine's cores in use (100 = all of them)")
    memory_percent = serializers.FloatField(allow_null=True,
                                            help_text="share of the machine's memory in use")
    memory_gb = serializers.FloatField(allow_null=True, help_text="memory in use, GB (10^9)")
    accelerator_percent = serializers.FloatField(
        allow_null=True, help_text="accelerator utilisation (null: the replica has none)")
    accelerator_memory_percent = serializers.FloatField(allow_null=True)


class ReplicaSystemSerializer(serializers.Serializer):
    replica = serializers.CharField(help_text="the task name, e.g. workerpool0-0")
    latest = SystemSampleSerializer(help_text="each figure's newest value")
    history = SystemSampleSerializer(many=True, help_text=(
        f"oldest first, at most {system_metrics.CHART_POINTS} samples"))


class JobSystemSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    vertex_job_id = serializers.CharField(help_text="the CustomJob whose series these are")
    minutes = serializers.IntegerField()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    replicas = ReplicaSystemSerializer(many=True)
    note = serializers.CharField(help_text="why there are no replicas, when there are none")


class JobSystemView(APIView):
    """CPU, memory and accelerator use of each replica of the job's current attempt, from Cloud
    Monitoring (the local emulator samples its replicas' processes): the latest sample and the
    history over the last `minutes` (up to the job's end). 503 when Cloud Monitoring cannot be
    read."""

    @extend_schema(
        parameters=[OpenApiParameter(
            "minutes", int, description=f"the window, 1 to {system_metrics.MAX_MINUTES} "
                                        f"(default {system_metrics.DEFAULT_MINUTES})")],
        responses={200: JobSystemSerializer})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
        minutes = _minutes(request.query_params.get("minutes"))
        try:
            body = system_metrics.read(job, minutes)
        except system_metrics.Unavailable as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(JobSystemSerializer(body).data)


def _minutes(raw: str | None) -> int:
    if raw is None or raw == "":
        return system_metrics.DEFAULT_MINUTES
    minutes = ascii_int(raw, max_digits=len(str(system_metrics.MAX_MINUTES)))
    if minutes is None or not 1 <= minutes <= system_metrics.MAX_MINUTES:
        raise ValidationError({"minutes": [
            f"a whole number of minutes from 1 to {system_metrics.MAX_MINUTES}"]})
    return minutes
