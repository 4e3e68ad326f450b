"""Filters of the job list: GET /api/v1/jobs/?state=&team=&user=&accelerator=&created_after=
&created_before= (all optional, combined with AND; paged with limit/offset)."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError

from controlplane.runs.models import Job, JobState

# The pools a job request may name, as stored in Job.request.
POOLS = ("chief", "workers", "reduction_server", "parameter_servers", "evaluators")

JOB_LIST_PARAMETERS = [
    OpenApiParameter("state", str, enum=list(JobState.values),
                     description="the job's state (any case)"),
    OpenApiParameter("team", str, description="team slug"),
    OpenApiParameter("user", str, description="username of whoever submitted the job"),
    OpenApiParameter("accelerator", str,
                     description="accelerator type in any pool, e.g. NVIDIA_TESLA_T4"),
    OpenApiParameter("created_after", str,
                     description="ISO 8601 date or date-time, inclusive (a date: from 00:00 UTC)"),
    OpenApiParameter("created_before", str,
                     description="ISO 8601 date or date-time, exclusive (a date: to 00:00 UTC)"),
]


def _moment(name: str, raw: str) -> datetime:
    moment = parse_datetime(raw)
    if moment is None:
        try:
            day = parse_date(raw)
        except ValueError:
            day = None
        if day is None:
            raise ValidationError({name: ["an ISO 8601 date (2026-01-31) or date-time "
                                          "(2026-01-31T12:00:00Z)"]})
        moment = datetime.combine(day, time.min)
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=UTC)
    return moment


def filter_jobs(jobs: QuerySet[Job], params: dict[str, str]) -> QuerySet[Job]:
    """Apply the query's filters; a bad value is a 400 that names the parameter."""
    try:
        state = params.get("state", "").strip().upper()
        if state:
            if state not in JobState.values:
                raise ValidationError({"state": [f"one of: {', '.join(JobState.values)}"]})
            jobs = jobs.filter(state=state)
        if params.get("team"):
            jobs = jobs.filter(team__slug=params["team"])
        if params.get("user"):
            jobs = jobs.filter(created_by__username=params["user"])
        accelerator = params.get("accelerator", "").strip().upper()
        if accelerator:
            in_any_pool = Q()
            for pool in POOLS:
                in_any_pool |= Q(**{f"request__{pool}__accelerator_type": accelerator})
            jobs = jobs.filter(in_any_pool)
        if params.get("created_after"):
            jobs = jobs.filter(created_at__gte=_moment("created_after", params["created_after"]))
        if params.get("created_before"):
            jobs = jobs.filter(created_at__lt=_moment("created_before",
                                                      params["created_before"]))
    except (OverflowError, ValueError) as exc:
        raise ValidationError({"detail": [str(exc)]}) from exc
    return jobs
