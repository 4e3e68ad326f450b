"""REST API for scripting: the same validation and the same lifecycle as the pages."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from jobs import access, lifecycle, requests
from jobs.api.filters import JOB_LIST_PARAMETERS, filter_jobs
from jobs.api.serializers import (
    EventSerializer,
    JobListSerializer,
    JobRequestSerializer,
    JobSerializer,
    plain,
)
from jobs.budgets.service import BudgetExceeded
from jobs.models import Job, Team
from jobs.templates_models import memory_policy_for
from security import audit


def resolve_team(user: Any, slug: str | None) -> Team:
    """The team a request submits to: named, or the caller's only team with submit rights."""
    if slug:
        team = access.teams_of(user).filter(slug=slug).first()
        if team is None:
            if access.outside_credential_scope(user, slug):
                raise ValidationError({"team": [f"this token is not for team {slug!r}: make "
                                                "one that is, or use one without teams"]})
            raise ValidationError({"team": [f"you are not a member of a team {slug!r}"]})
        if not access.can_submit(user, team):
            raise PermissionDenied(f"your role in team {slug!r} cannot submit jobs")
        return team
    teams = list(access.submit_teams(user)[:2])
    if len(teams) != 1:
        names = ", ".join(t.slug for t in access.submit_teams(user)) or "none"
        raise ValidationError({"team": [f"name the team to submit to (yours: {names})"]})
    return teams[0]


@extend_schema_view(get=extend_schema(parameters=JOB_LIST_PARAMETERS))
class JobList(generics.ListCreateAPIView):
    def get_queryset(self) -> QuerySet[Job]:
        jobs = access.visible_jobs(self.request.user)
        if self.request.method != "GET":
            return jobs
        return filter_jobs(jobs, self.request.query_params)

    def get_serializer_class(self) -> type:
        return JobRequestSerializer if self.request.method == "POST" else JobListSerializer

    @extend_schema(request=JobRequestSerializer, responses={201: JobSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create a job from the form's fields, or from a Vertex CustomJob in its REST JSON
        (?team=slug&region=... then name the team and region); errors of a CustomJob are keyed
        by the path of the bad field in it."""
        if requests.is_custom_job(request.data):
            team = resolve_team(request.user, request.query_params.get("team"))
            checked = requests.check_custom_job(
                request.data, team, region=request.query_params.get("region"),
                memory_policy=memory_policy_for(team))
            if not checked.ok:
                raise ValidationError(checked.errors)
        else:
            serializer = JobRequestSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            data = plain(serializer.validated_data)
            team = resolve_team(request.user, data.pop("team", None))
            checked = requests.check(data, team)
            if not checked.ok:
                raise ValidationError(requests.nested(checked.errors))
        try:
            job = lifecycle.create_job(team=team, user=request.user, request=checked.request,
                                       composition=checked.composition)
        except BudgetExceeded as exc:
            # A Response, not a ValidationError: the figures stay integers.
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        audit.record(request, "job.submit", job)
        body = JobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


class JobDetail(generics.RetrieveAPIView):
    serializer_class = JobSerializer

    def get_queryset(self) -> QuerySet[Job]:
        return access.visible_jobs(self.request.user).prefetch_related("attempts")


class JobChildList(generics.ListAPIView):
    """Rows that belong to one visible job (404 for a job outside the caller's teams)."""

    related_name = ""

    def get_queryset(self) -> QuerySet[Any]:
        job = get_object_or_404(access.visible_jobs(self.request.user), pk=self.kwargs["pk"])
        return getattr(job, self.related_name).all()


class JobEvents(JobChildList):
    serializer_class = EventSerializer
    related_name = "events"


# A job's steps, logs and metric series: jobs/api/logs.py.
