"""The quota preflight's count of what this control plane's jobs hold in a region: each
holding job's accelerators from its current attempt's spec as submitted (its CustomJob as
composed before it has one), read in one query whatever the number of jobs."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from controlplane.compose.quota_check import in_use
from controlplane.runs.models import Job, JobAttempt, JobKind, JobState
from controlplane.teams.models import Team


def spec(accelerator: str, count: int, replicas: int = 1) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": accelerator,
                        "acceleratorCount": count}, "replicaCount": replicas}]}}


def job(team: Team, state: str, composed: dict[str, Any], submitted: list[Any],
        region: str = "us-central1", kind: str = JobKind.JOB) -> Job:
    """A job whose attempts were submitted with SUBMITTED (None: not yet), the last current."""
    user, _ = get_user_model().objects.get_or_create(username="quota")
    made = Job.objects.create(team=team, created_by=user, name="j", request={}, state=state,
                              custom_job=composed, region=region, kind=kind,
                              attempt=max(len(submitted), 1))
    for number, sent in enumerate(submitted, 1):
        JobAttempt.objects.create(job=made, number=number, display_name=f"a{number}",
                                  submitted_spec=sent, region=region)
    return made


@pytest.mark.django_db
def test_holding_jobs_count_their_current_attempts_spec(team: Team) -> None:
    a100, h100 = "NVIDIA_TESLA_A100", "NVIDIA_H100_80GB"
    # Submitted with 8 A100 after being composed with 4: the submitted spec counts.
    job(team, JobState.RUNNING, spec(a100, 4), [spec(a100, 8)])
    # Its second attempt was resubmitted on H100: the current attempt counts, not the first.
    job(team, JobState.PENDING, spec(a100, 2), [spec(a100, 2), spec(h100, 8, replicas=2)])
    # Not submitted yet (no spec on its attempt): the composed CustomJob counts.
    job(team, JobState.CANCELLING, spec(a100, 1), [None])
    # Neither a job that holds nothing yet, nor one elsewhere, nor a Ray job (its cluster's).
    job(team, JobState.QUEUED, spec(a100, 8), [None])
    job(team, JobState.RUNNING, spec(a100, 8), [spec(a100, 8)], region="europe-west4")
    job(team, JobState.RUNNING, spec(a100, 8), [None], kind=JobKind.RAY)
    used = in_use("us-central1")
    assert sorted(used.values()) == [9, 16], used
    assert sum(count for metric, count in used.items() if "a100" in metric.lower()) == 9


@pytest.mark.django_db
def test_one_query_whatever_the_number_of_jobs(team: Team) -> None:
    counts = []
    for _ in range(2):
        for _ in range(10):
            job(team, JobState.RUNNING, spec("NVIDIA_TESLA_A100", 1), [None, spec(
                "NVIDIA_TESLA_A100", 2)])
        with CaptureQueriesContext(connection) as queries:
            used = in_use("us-central1")
        counts.append(len(queries))
    assert sum(used.values()) == 40
    assert counts == [1, 1]
