"""The API job list writes its rows from plain columns (controlplane/runs/list_rows.py), and the
job record field by field (controlplane/runs/detail_body.py): each must be what the published
schema's serializer (JobListSerializer, JobSerializer) makes of the same job."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient, APIRequestFactory

from controlplane.logs.models import LogFailure
from controlplane.runs import detail_body, list_rows
from controlplane.runs.models import Job, JobAttempt, JobEvent, JobKind, JobState
from controlplane.runs.serializers import JobListSerializer, JobSerializer
from controlplane.security import tokens
from controlplane.teams.models import Role, Team
from tests.people import make_user

pytestmark = pytest.mark.django_db

REQUEST = {"name": "exp", "chief": {"machine_type": "n1-standard-4"}}


def _jobs(team: Team, user: Any) -> list[Job]:
    """Jobs that between them set every field of a row one way or another."""
    start = datetime(2026, 3, 2, 12, 0, 0, 123456, tzinfo=UTC)

    def make(name: str, **fields: Any) -> Job:
        job = Job.objects.create(team=team, created_by=user, name=name, request=REQUEST,
                                 custom_job={}, project="p", region="us-central1", **fields)
        return job

    running = make("running", state=JobState.RUNNING, started_at=start, last_step=40,
                   total_steps=1000, last_loss=2.5, cost_micros=1_250_000,
                   estimate_micros=9_000_000, attempt=2, restarts=3,
                   quota_wait={"retries": 2, "next_at": "2026-03-02T12:00:00Z"})
    failed = make("failed", state=JobState.FAILED, started_at=start,
                  ended_at=start + timedelta(hours=1), last_loss=7.0, lost_micros=420)
    LogFailure.objects.create(job=failed, attempt=1, kind="oom", timestamp=start,
                              replica="workerpool0-0", summary="CUDA out of memory",
                              last_frame='File "train.py", line 9', insert_id="f1")
    silent_failure = make("failed-silently", state=JobState.FAILED)
    queued = make("queued", state=JobState.QUEUED)
    trial = make("trial", state=JobState.SUCCEEDED, kind=JobKind.TRIAL, last_loss=1)
    return [running, failed, silent_failure, queued, trial]


def _serialized(jobs: list[Job], path: str) -> list[dict[str, Any]]:
    """What the DRF serializer makes of the jobs, through JSON as a response carries it."""
    request = APIRequestFactory().get(path)
    data = JobListSerializer(jobs, many=True, context={"request": request}).data
    return json.loads(JSONRenderer().render(data))


def test_rows_are_what_the_serializer_makes() -> None:
    team = Team.objects.create(name="Vision", slug="vision")
    user = make_user("ann", team, Role.MEMBER)
    jobs = _jobs(team, user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {tokens.create(user, 'test').key}")

    response = client.get("/api/v1/jobs/", {"kind": "all"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == len(jobs)
    newest_first = sorted(jobs, key=lambda j: (j.created_at, j.pk), reverse=True)
    expected = _serialized(newest_first, "/api/v1/jobs/")
    assert body["results"] == expected
    # The rows tell the jobs apart where they differ: not equal by being empty.
    by_name = {row["name"]: row for row in body["results"]}
    assert by_name["failed"]["diagnosis"]["kind"] == "oom"
    assert by_name["failed-silently"]["diagnosis"] is None
    assert by_name["running"]["quota_wait"]["retries"] == 2
    assert by_name["running"]["started_at"] == "2026-03-02T12:00:00.123456Z"
    assert by_name["trial"]["last_loss"] == 1.0
    assert by_name["queued"]["url"] == f"http://testserver/api/v1/jobs/{by_name['queued']['id']}/"


def test_cursor_pages_hold_the_same_rows() -> None:
    team = Team.objects.create(name="Vision", slug="vision")
    user = make_user("ann", team, Role.MEMBER)
    jobs = _jobs(team, user)
    client = APIClient()
    client.force_authenticate(user)

    seen: list[dict[str, Any]] = []
    page = client.get("/api/v1/jobs/", {"kind": "all", "cursor": "", "limit": 2}).json()
    while True:
        assert "count" not in page
        seen += page["results"]
        if page["next"] is None:
            break
        page = client.get(page["next"]).json()

    newest_first = sorted(jobs, key=lambda j: (j.created_at, j.pk), reverse=True)
    assert seen == _serialized(newest_first, "/api/v1/jobs/")


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/Los_Angeles"])
def test_moments_are_written_as_drf_writes_them(zone: str) -> None:
    field = serializers.DateTimeField()
    moments = [datetime(2026, 1, 5, 3, 4, 5, tzinfo=UTC),
               datetime(2026, 7, 5, 23, 59, 59, 999999, tzinfo=UTC), None]
    with timezone.override(zone):
        for moment in moments:
            expected = None if moment is None else field.to_representation(moment)
            assert list_rows.moment(moment) == expected


def test_the_record_is_what_the_serializer_makes() -> None:
    team = Team.objects.create(name="Vision", slug="vision")
    user = make_user("ann", team, Role.MEMBER)
    jobs = _jobs(team, user)
    running, failed = jobs[0], jobs[1]
    start = datetime(2026, 3, 2, 12, 0, 0, 123456, tzinfo=UTC)
    JobAttempt.objects.create(job=running, number=1, display_name="cp-a1",
                              vertex_name="projects/p/locations/us-central1/customJobs/7",
                              vertex_job_id="7", vertex_state="JOB_STATE_FAILED",
                              submitted_at=start, started_at=start,
                              ended_at=start + timedelta(minutes=5), error_message="preempted")
    JobAttempt.objects.create(job=running, number=2, display_name="cp-a2", vertex_job_id="8",
                              vertex_name="projects/p/locations/us-central1/customJobs/8")
    JobEvent.objects.create(job=running, attempt=1, kind="checkpoint_saved", timestamp=start,
                            replica="workerpool0-0", step=50, insert_id="c1",
                            data={"step": 50, "path": "gs://b/step-50"})
    running.tracking = {"wandb": "https://wandb.ai/team/run"}
    running.save(update_fields=["tracking"])
    client = APIClient()
    client.force_authenticate(user)

    for job in jobs:
        response = client.get(f"/api/v1/jobs/{job.pk}/")
        assert response.status_code == 200, response.content
        fresh = Job.objects.select_related("team", "created_by").get(pk=job.pk)
        request = APIRequestFactory().get(f"/api/v1/jobs/{job.pk}/")
        expected = json.loads(JSONRenderer().render(
            JobSerializer(fresh, context={"request": request}).data))
        assert response.json() == expected, job.name

    record = client.get(f"/api/v1/jobs/{running.pk}/").json()
    assert [a["number"] for a in record["attempts"]] == [1, 2]
    assert record["attempts"][0]["ended_at"] == "2026-03-02T12:05:00.123456Z"
    assert record["checkpoints"][0]["path"] == "gs://b/step-50"
    assert record["tracking"] == {"wandb": "https://wandb.ai/team/run"}
    assert record["links"]  # the console and logs links of a submitted attempt
    assert client.get(f"/api/v1/jobs/{failed.pk}/").json()["diagnosis"]["kind"] == "oom"


@pytest.fixture
def more_fields() -> Iterator[None]:
    """The serializers with more of the job's columns listed, the fast writers read anew; as
    they were afterwards."""
    listed, recorded = JobListSerializer.Meta.fields, JobSerializer.Meta.fields
    JobListSerializer.Meta.fields = [*listed, "region", "state_changed_at"]
    JobSerializer.Meta.fields = [*recorded, "project", "estimate_micros"]
    try:
        importlib.reload(list_rows)
        importlib.reload(detail_body)
        yield
    finally:
        JobListSerializer.Meta.fields, JobSerializer.Meta.fields = listed, recorded
        importlib.reload(list_rows)
        importlib.reload(detail_body)


def test_a_field_listed_in_the_serializer_is_written_by_the_fast_writers(more_fields: None
                                                                         ) -> None:
    team = Team.objects.create(name="Vision", slug="vision")
    user = make_user("ann", team, Role.MEMBER)
    jobs = _jobs(team, user)
    client = APIClient()
    client.force_authenticate(user)

    rows = client.get("/api/v1/jobs/", {"kind": "all"}).json()["results"]
    newest_first = sorted(jobs, key=lambda j: (j.created_at, j.pk), reverse=True)
    assert rows == _serialized(newest_first, "/api/v1/jobs/")
    assert rows[0]["region"] == "us-central1" and rows[0]["state_changed_at"]
    assert list(rows[0]) == JobListSerializer.Meta.fields

    record = client.get(f"/api/v1/jobs/{jobs[0].pk}/").json()
    assert record["project"] == "p" and record["estimate_micros"] == 9_000_000
    assert list(record) == JobSerializer.Meta.fields


def test_a_field_the_fast_writers_cannot_write_stops_the_app() -> None:
    listed = JobListSerializer.Meta.fields
    JobListSerializer.Meta.fields = [*listed, "no_such_column"]
    try:
        with pytest.raises(ImproperlyConfigured, match="no_such_column"):
            importlib.reload(list_rows)
    finally:
        JobListSerializer.Meta.fields = listed
        importlib.reload(list_rows)
