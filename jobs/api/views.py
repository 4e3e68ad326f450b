"""REST API for scripting: the same validation and the same lifecycle as the pages."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import access, lifecycle, requests
from jobs.api.serializers import (
    EventSerializer,
    JobListSerializer,
    JobRequestSerializer,
    JobSerializer,
    LogLineSerializer,
    StepSerializer,
)
from jobs.models import Job, Team


def resolve_team(user: Any, slug: str | None) -> Team:
    """The team a request submits to: named, or the caller's only team with submit rights."""
    if slug:
        team = access.teams_of(user).filter(slug=slug).first()
        if team is None:
            raise ValidationError({"team": [f"you are not a member of a team {slug!r}"]})
        if not access.can_submit(user, team):
            raise PermissionDenied(f"your role in team {slug!r} cannot submit jobs")
        return team
    teams = list(access.submit_teams(user)[:2])
    if len(teams) != 1:
        names = ", ".join(t.slug for t in access.submit_teams(user)) or "none"
        raise ValidationError({"team": [f"name the team to submit to (yours: {names})"]})
    return teams[0]


class JobList(generics.ListCreateAPIView):
    def get_queryset(self) -> QuerySet[Job]:
        jobs = access.visible_jobs(self.request.user)
        state = self.request.query_params.get("state")
        if state:
            jobs = jobs.filter(state=state.upper())
        team = self.request.query_params.get("team")
        if team:
            jobs = jobs.filter(team__slug=team)
        return jobs

    def get_serializer_class(self) -> type:
        return JobRequestSerializer if self.request.method == "POST" else JobListSerializer

    @extend_schema(request=JobRequestSerializer, responses={201: JobSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = JobRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        team = resolve_team(request.user, data.pop("team", None))
        checked = requests.check(data, team)
        if not checked.ok:
            raise ValidationError(requests.nested(checked.errors))
        job = lifecycle.create_job(team=team, user=request.user, request=checked.request,
                                   composition=checked.composition)
        body = JobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


class JobDetail(generics.RetrieveAPIView):
    serializer_class = JobSerializer

    def get_queryset(self) -> QuerySet[Job]:
        return access.visible_jobs(self.request.user).prefetch_related("attempts")


class JobCancel(APIView):
    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
        if not access.can_submit(request.user, job.team):
            raise PermissionDenied("your role in this team cannot cancel jobs")
        if not lifecycle.request_cancel(job.pk):
            raise ValidationError({"state": [f"the job is already {job.state}"]})
        job.refresh_from_db()
        return Response(JobSerializer(job, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


class JobChildList(generics.ListAPIView):
    """Rows that belong to one visible job (404 for a job outside the caller's teams)."""

    related_name = ""

    def get_queryset(self) -> QuerySet[Any]:
        job = get_object_or_404(access.visible_jobs(self.request.user), pk=self.kwargs["pk"])
        return getattr(job, self.related_name).all()


class JobEvents(JobChildList):
    serializer_class = EventSerializer
    related_name = "events"


class JobSteps(JobChildList):
    serializer_class = StepSerializer
    related_name = "steps"


class JobLogs(JobChildList):
    serializer_class = LogLineSerializer
    related_name = "log_lines"

    def get_queryset(self) -> QuerySet[Any]:
        lines = super().get_queryset()
        params = self.request.query_params
        if params.get("replica"):
            lines = lines.filter(replica=params["replica"])
        if params.get("q"):
            lines = lines.filter(message__icontains=params["q"])
        if params.get("severity"):
            from jobs.backends.base import SEVERITY_NUMBERS

            level = SEVERITY_NUMBERS.get(params["severity"].upper())
            if level is None:
                raise ValidationError({"severity": [
                    f"unknown severity; valid: {', '.join(SEVERITY_NUMBERS)}"]})
            lines = lines.filter(severity__gte=level)
        return lines
