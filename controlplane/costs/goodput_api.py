"""Goodput in the API: a job's (GET /api/v1/jobs/<id>/goodput/) and a team's month
(GET /api/v1/teams/<team>/goodput/?month=YYYY-MM), as controlplane/costs/goodput.py reads them."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.costs import goodput
from controlplane.costs.budgets_api import team_for
from controlplane.runs import access as runs_access
from vertexplan.goodput import CATEGORIES

MONTH_PATTERN = "^[1-9][0-9]{3}-(0[1-9]|1[0-2])$"


class CategorySerializer(serializers.Serializer):
    # Plain strings, not enums: a schema enum named "Name" or "Status" would take the name
    # other operations' enums have in the generated client.
    name = serializers.CharField(help_text="one of " + ", ".join(CATEGORIES))
    accelerator_seconds = serializers.FloatField()
    cost_usd = serializers.FloatField(allow_null=True,
                                      help_text="null when the job has no readable prices")
    cost_micros = serializers.IntegerField(allow_null=True)
    billed = serializers.BooleanField(help_text="false: reported beside the bill (queued, "
                                                "provisioning, preemption gaps)")


class JobGoodputSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    status = serializers.CharField(help_text="\"so far\" while the job runs, then \"final\"")
    accelerators = serializers.IntegerField()
    billed_accelerator_seconds = serializers.FloatField()
    goodput = serializers.FloatField(allow_null=True, help_text="productive over billed")
    categories = CategorySerializer(many=True)
    replayed_steps = serializers.IntegerField()
    step_seconds = serializers.FloatField(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())


class JobLineSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    name = serializers.CharField()
    billed_accelerator_seconds = serializers.FloatField()
    goodput = serializers.FloatField(allow_null=True)


class IdleResourceSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="the persistent resource (a Ray cluster)")
    accelerators = serializers.IntegerField(help_text="its accelerators (machines if none)")
    idle_seconds = serializers.FloatField(help_text="wall seconds in the month it was up with "
                                                    "nothing running on it")
    accelerator_seconds = serializers.FloatField()
    cost_usd = serializers.FloatField()
    cost_micros = serializers.IntegerField()


class TeamGoodputSerializer(serializers.Serializer):
    team = serializers.CharField()
    month = serializers.CharField()
    jobs = serializers.IntegerField()
    billed_accelerator_seconds = serializers.FloatField()
    goodput = serializers.FloatField(allow_null=True)
    categories = CategorySerializer(many=True)
    top_badput = CategorySerializer(many=True)
    by_job = JobLineSerializer(many=True)
    idle_resources = IdleResourceSerializer(
        many=True, help_text="the persistent resources idle in the month: their sum is the "
                             "category idle")


class JobGoodputView(APIView):
    """Where the job's accelerator time went: productive step time and each cause of badput,
    in accelerator-seconds and dollars (its bill shared by time); the categories marked billed
    add up to billed_accelerator_seconds."""

    @extend_schema(responses={200: JobGoodputSerializer})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
        return Response(goodput.job_report(job))


class TeamGoodputView(APIView):
    """The team's goodput in a month (UTC; its jobs created in it, as its spend counts them):
    the sum of its jobs' categories and, as `idle`, the time its persistent resources were up
    with nothing running on them; the top causes of badput, each job's goodput, each idle
    resource."""

    @extend_schema(
        parameters=[OpenApiParameter("month", {"type": "string", "pattern": MONTH_PATTERN},
                                     description="YYYY-MM (UTC); this month when left out")],
        responses={200: TeamGoodputSerializer})
    def get(self, request: Request, team: str) -> Response:
        found = team_for(request.user, team)
        try:
            month = goodput.parse_month(request.query_params.get("month"))
        except ValueError as exc:
            raise ValidationError({"month": [str(exc)]}) from exc
        return Response(goodput.team_month(found, month))
