"""Filters of the job list: GET /api/v1/jobs/?state=&team=&user=&accelerator=&created_after=
&created_before=&kind=&tag=&config= (all optional, combined with AND; paged with limit/offset).
Without `kind` the list holds the jobs submitted as jobs, not sweeps' trials or Ray jobs."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError

from controlplane.core import bounded
from controlplane.runs import config_keys, tags
from controlplane.runs.models import Job, JobKind, JobState

# The pools a job request may name, as stored in Job.request.
POOLS = ("chief", "workers", "reduction_server", "parameter_servers", "evaluators")

# An empty value is no filter, as the jobs page's form sends it.
DATE_TIME_OR_EMPTY = {"oneOf": [{"type": "string", "format": "date-time"},
                                {"type": "string", "maxLength": 0}]}

JOB_LIST_PARAMETERS = [
    OpenApiParameter("state", str, enum=list(JobState.values),
                     description="the job's state (any case)"),
    OpenApiParameter("team", str, description="team slug"),
    OpenApiParameter("user", str, description="username of whoever submitted the job"),
    OpenApiParameter("accelerator", str,
                     description="accelerator type in any pool, e.g. NVIDIA_TESLA_T4"),
    OpenApiParameter("created_after", DATE_TIME_OR_EMPTY,
                     description="ISO 8601 date-time, inclusive (a date alone also works: "
                                 "from 00:00 UTC); empty: no limit"),
    OpenApiParameter("created_before", DATE_TIME_OR_EMPTY,
                     description="ISO 8601 date-time, exclusive (a date alone also works: "
                                 "to 00:00 UTC); empty: no limit"),
    OpenApiParameter("tag", str,
                     description="a tag the job carries: key (any value) or key=value "
                                 "(controlplane/runs/tags.py)"),
    OpenApiParameter("config", str,
                     description="a configuration value of the job's request or trainer "
                                 "arguments: KEY OP VALUE, e.g. lr=0.001, "
                                 "batch.micro_batch_size>=4 (keys of letters, digits, '_' "
                                 "and '.'; = != < <= > >=; controlplane/runs/config_keys.py)"),
    OpenApiParameter("kind", str, enum=[*JobKind.values, "all"],
                     description="job (the default: jobs submitted as jobs), trial (sweeps' "
                                 "trials), ray (Ray jobs on clusters) or all"),
]


FILTER_NAMES = ("state", "team", "user", "accelerator", "created_after", "created_before",
                "kind", "tag", "config")
ALL_KINDS = "all"


def asked_kind(raw: str) -> str:
    """The kind a `kind` value asks for: `job` when none is given, `all` for every kind; a 400
    for anything else. (The list's count reads the same: controlplane/runs/counts.py.)"""
    kind = raw.strip().lower() or JobKind.JOB
    if kind != ALL_KINDS and kind not in JobKind.values:
        raise ValidationError({"kind": [f"one of: {', '.join([*JobKind.values, ALL_KINDS])}"]})
    return kind


def asked_state(raw: str) -> str:
    """The state a `state` value asks for, in any case; '' for none, a 400 for another."""
    state = raw.strip().upper()
    if state and state not in JobState.values:
        raise ValidationError({"state": [f"one of: {', '.join(JobState.values)}"]})
    return state


def filter_kind(jobs: QuerySet[Job], raw: str) -> QuerySet[Job]:
    """Jobs of one kind (`job` when none is asked for), or every kind for `all`."""
    kind = asked_kind(raw)
    return jobs if kind == ALL_KINDS else jobs.filter(kind=kind)


def _moment(name: str, raw: str) -> datetime:
    return bounded.moment(name, raw)


def filter_jobs(jobs: QuerySet[Job], params: dict[str, str]) -> QuerySet[Job]:
    """Apply the query's filters; a bad value is a 400 that names the parameter."""
    for name in FILTER_NAMES:
        if "\x00" in params.get(name, ""):  # PostgreSQL text cannot hold it
            raise ValidationError({name: ["a NUL character is not allowed"]})
    jobs = filter_kind(jobs, params.get("kind", ""))
    try:
        state = asked_state(params.get("state", ""))
        if state:
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
        if params.get("tag", "").strip():
            jobs = tags.filter_tag(jobs, params["tag"])
        if params.get("config", "").strip():
            jobs = config_keys.filter_config(jobs, params["config"])
    except (tags.TagError, config_keys.ConfigFilterError) as exc:
        raise ValidationError({exc.field: [str(exc)]}) from exc
    except (OverflowError, ValueError) as exc:
        raise ValidationError({"detail": [str(exc)]}) from exc
    return jobs


# The job list's accelerator filter, by family rather than by exact enum: a family matches
# every accelerator type whose name holds it as a word (A100 matches NVIDIA_TESLA_A100 and
# NVIDIA_A100_80GB); "TPU" every TPU; "CPU" jobs with no accelerator in any pool.
ACCELERATOR_FAMILIES = ("T4", "L4", "P4", "P100", "V100", "A100", "H100", "H200", "B200",
                        "GB200", "RTX_PRO_6000", "TPU", "CPU")


def _any_pool(lookup: str, value: str) -> Q:
    matched = Q()
    for pool in POOLS:
        matched |= Q(**{f"request__{pool}__accelerator_type__{lookup}": value})
    return matched


def filter_accelerator_family(jobs: QuerySet[Job], family: str) -> QuerySet[Job]:
    """Jobs with an accelerator of ``family`` in any pool; an unknown family: no filter."""
    family = family.strip().upper()
    if family not in ACCELERATOR_FAMILIES:
        return jobs
    if family == "CPU":
        # A subquery: NOT over a missing JSON key would be NULL and drop the very jobs wanted.
        accelerated = Job.objects.filter(_any_pool("iregex", r"^(NVIDIA|TPU)_")).values("pk")
        return jobs.exclude(pk__in=accelerated)
    if family == "TPU":
        return jobs.filter(_any_pool("istartswith", "TPU_"))
    return jobs.filter(_any_pool("iregex", rf"(^|_){family}(_|$)"))
