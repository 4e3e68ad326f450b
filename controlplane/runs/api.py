"""REST API of jobs as they run: the list, a job, its events, attempts and restarts, and cancel.
(Creating jobs, through the same validation as the pages, is compose's: compose/api.py.)"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.pagination import KeysetOrOffsetPagination
from controlplane.runs import access as runs_access
from controlplane.runs import counts, detail_body, groups, lifecycle, list_rows, tags
from controlplane.runs.filters import FILTER_NAMES, JOB_LIST_PARAMETERS, filter_jobs
from controlplane.runs.models import Job, JobAttempt, JobKind, JobRestart
from controlplane.runs.serializers import (
    EventSerializer,
    JobGroupsSerializer,
    JobListSerializer,
    JobNotesSerializer,
    JobSerializer,
)
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Team


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
class JobList(generics.ListAPIView):
    # A team's history grows without end: ?cursor= pages it without counting it.
    pagination_class = KeysetOrOffsetPagination

    def get_queryset(self) -> QuerySet[Job]:
        jobs = runs_access.visible_jobs(self.request.user)
        if self.request.method != "GET":
            return jobs
        return filter_jobs(jobs, self.request.query_params)

    def get_serializer_class(self) -> type:
        # The schema of the rows list_rows writes (the OpenAPI document, the generated client).
        return JobListSerializer

    def counted(self) -> int | None:
        """The list's `count` from the jobs' tally, where it can tell (for the pagination)."""
        return counts.job_list_count(self.request.user, self.request.query_params)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A page of rows read as the columns they show: controlplane/runs/list_rows.py."""
        page = self.paginate_queryset(self.get_queryset().values(*list_rows.COLUMNS))
        assert page is not None  # the list is always paged
        return self.get_paginated_response(list_rows.rows(page, request))


GROUP_BY_PARAMETER = OpenApiParameter(
    "group_by", str, required=True,
    description="tag:KEY (a tag key), config:KEY (a flat configuration key, e.g. config:lr) "
                "or sweep (a trial's sweep; the kind is then trial unless `kind` says "
                "otherwise); controlplane/runs/groups.py")


@extend_schema_view(get=extend_schema(parameters=[GROUP_BY_PARAMETER, *JOB_LIST_PARAMETERS],
                                      responses={200: JobGroupsSerializer}))
class JobGroups(APIView):
    """The job list grouped by a tag key, a configuration key or the sweep, after the list's
    filters: each group's jobs by state, best and mean last loss, cost, running time,
    accelerator-hours and its newest jobs, the largest groups first (at most 200; `more` says
    there were others)."""

    def get(self, request: Request) -> Response:
        params = request.query_params
        try:
            by = groups.parse(params.get("group_by", ""))
        except groups.GroupByError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        asked = {name: params[name] for name in FILTER_NAMES if name in params}
        if by.is_sweep and not asked.get("kind", "").strip():
            asked["kind"] = JobKind.TRIAL  # a sweep's jobs are its trials
        grouping = groups.group(filter_jobs(runs_access.visible_jobs(request.user), asked), by)
        list_url = request.build_absolute_uri(reverse("api-job-list"))
        compare_url = request.build_absolute_uri(reverse("job-compare"))
        body = []
        for group in grouping.groups:
            named = group.pop("filter")
            # The group's own filter beside the request's, unless it would replace one.
            clash = named is None or any(asked.get(k, "").strip() for k in named)
            ids = ",".join(str(job["id"]) for job in group["newest"])
            jobs_url = None if clash else f"{list_url}?{urlencode({**asked, **named})}"
            body.append({**group, "jobs_url": jobs_url,
                         "compare_url": f"{compare_url}?{urlencode({'ids': ids})}"})
        return Response({"group_by": by.text, "groups": body, "more": grouping.more,
                         "limit": grouping.limit})


class JobDetail(generics.RetrieveAPIView):
    # The schema of the record detail_body writes (the OpenAPI document, the generated client).
    serializer_class = JobSerializer

    def get_queryset(self) -> QuerySet[Job]:
        return runs_access.visible_jobs(self.request.user).prefetch_related("attempts")

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The record written field by field: controlplane/runs/detail_body.py."""
        return Response(detail_body.body(self.get_object(), request))

    @extend_schema(request=JobNotesSerializer, responses={200: JobSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        """The job's tags and note (any kind of job: its team's members and admins)."""
        job = self.get_object()
        if not access.can_submit(request.user, job.team):
            raise PermissionDenied("your role in this team cannot tag jobs")
        body = JobNotesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            change = tags.update(job, **body.validated_data)
        except tags.TagError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        if change.changed:
            audit.record(request, "job.tag", job, detail=tags.change_detail(job, change))
        return Response(detail_body.body(job, request))


class JobChildList(generics.ListAPIView):
    """Rows that belong to one visible job (404 for a job outside the caller's teams)."""

    related_name = ""

    def get_queryset(self) -> QuerySet[Any]:
        job = get_object_or_404(runs_access.visible_jobs(self.request.user), pk=self.kwargs["pk"])
        return getattr(job, self.related_name).all()


class JobEvents(JobChildList):
    serializer_class = EventSerializer
    related_name = "events"


# A job's steps, logs and metric series: controlplane/logs/api.py.


def job_for_change(request: Request, pk: int, verb: str) -> Job:
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied(f"your role in this team cannot {verb} jobs")
    if not job.on_job_path:
        owner = "its sweep" if job.kind == JobKind.TRIAL else "its cluster's Ray job"
        raise ValidationError({"kind": [f"this job is a {job.get_kind_display()} job: "
                                         f"{verb} {owner} instead"]})
    return job


class JobCancel(APIView):
    # The schema's 409 (controlplane.core.openapi): cancelling a job that has ended.
    conflicts = "The job has already ended (or is being cancelled)."

    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = job_for_change(request, pk, "cancel")
        if not lifecycle.request_cancel(job.pk):
            job.refresh_from_db()
            return Response({"state": [f"the job is already {job.state}"]},
                            status=status.HTTP_409_CONFLICT)
        audit.record(request, "job.cancel", job)
        job.refresh_from_db()
        return Response(JobSerializer(job, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


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
        job = get_object_or_404(runs_access.visible_jobs(self.request.user), pk=self.kwargs["pk"])
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
