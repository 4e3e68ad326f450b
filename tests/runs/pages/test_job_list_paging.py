"""The job list's pages: the count from the jobs' tally (where it can tell) equals the jobs'
own count under every filter, each page holds the next jobs of the list's order, and the rows
(a Jinja2 fragment, runs/fragments/job_rows.html) escape what users named."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from controlplane.runs.models import Job, JobKind, JobState
from controlplane.teams.models import Role, Team
from tests.conftest import require
from tests.people import make_user
from tests.runs.pages.test_job_list_dashboard import names_in

COUNTED = re.compile(r"page (\d+) of (\d+) · (\d+) jobs")


@pytest.fixture
def many(member: Any, team: Team, other_team: Team,
         make_job: Callable[..., Job]) -> list[Job]:
    """61 jobs of the member's team (by two people, in four states, one a trial) and 3 of a
    team the member is not in; created a minute apart, newest last."""
    bob = make_user("bob", team, Role.MEMBER)
    start = timezone.now() - timedelta(days=1)
    states = [JobState.SUCCEEDED, JobState.FAILED, JobState.RUNNING, JobState.CANCELLED]
    jobs = []
    for n in range(61):
        job = make_job(team, member if n % 3 else bob, name=f"run-{n:02d}",
                       state=states[n % 4], kind=JobKind.TRIAL if n == 7 else JobKind.JOB)
        jobs.append(job)
    for n in range(3):
        make_job(other_team, make_user(f"o{n}", other_team, Role.ADMIN), name=f"theirs-{n}")
    for n, job in enumerate(Job.objects.order_by("id")):
        Job.objects.filter(pk=job.pk).update(created_at=start + timedelta(minutes=n))
    return jobs


def expected(**filters: Any) -> list[str]:
    """The member's jobs as the list orders them by default: running first, newest first."""
    jobs = Job.objects.filter(team__slug="vision", **filters).order_by("-created_at", "-id")
    return ([j.name for j in jobs if j.state == JobState.RUNNING]
            + [j.name for j in jobs if j.state != JobState.RUNNING])


@pytest.mark.parametrize("query, filters", [
    ({}, {"kind": JobKind.JOB}),
    ({"state": "FAILED"}, {"kind": JobKind.JOB, "state": JobState.FAILED}),
    ({"user": "bob"}, {"kind": JobKind.JOB, "created_by__username": "bob"}),
    ({"kind": "all"}, {}),
    ({"team": "vision", "state": "RUNNING"}, {"kind": JobKind.JOB, "state": JobState.RUNNING}),
    ({"q": "run-1"}, {"kind": JobKind.JOB, "name__icontains": "run-1"}),
    ({"state": "not-a-state"}, {"kind": JobKind.JOB}),
])
def test_every_page_holds_the_next_jobs_and_the_count_is_the_jobs_own(
        member_client: Client, many: list[Job], query: dict[str, str],
        filters: dict[str, Any]) -> None:
    assert Team.objects.get(slug="vision").pk == many[0].team_id
    want = expected(**filters)
    seen: list[str] = []
    page = 1
    while True:
        html = member_client.get(reverse("job-list"), {**query, "page": page}).content.decode()
        seen += names_in(html)
        counted = COUNTED.search(html)
        if counted is None:  # one page: no pager
            assert len(want) <= 50
            break
        assert int(counted.group(3)) == len(want), (query, counted.group(0))
        if page == int(counted.group(2)):
            break
        page += 1
    assert seen == want


def test_the_count_is_read_from_the_tally_not_by_counting_the_jobs(
        member_client: Client, many: list[Job]) -> None:
    require(connection.vendor == "postgresql",
            "the tally is kept by PostgreSQL's triggers: DATABASE_URL must be PostgreSQL")
    with CaptureQueriesContext(connection) as captured:
        member_client.get(reverse("job-list"), {"state": "FAILED"})
    counts = [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper()]
    assert counts == [], counts
    # A filter the tally has no column for: the jobs are counted.
    with CaptureQueriesContext(connection) as captured:
        member_client.get(reverse("job-list"), {"q": "run"})
    assert any("COUNT(" in q["sql"].upper() for q in captured.captured_queries)


def test_rows_escape_what_users_named(member_client: Client, member: Any, team: Team,
                                      make_job: Callable[..., Job]) -> None:
    make_job(team, member, name='<img src=x onerror="alert(1)">', state=JobState.FAILED,
             error_message="<script>steal()</script>")
    make_job(team, member, name="waits", state=JobState.WAITING_FOR_QUOTA,
             quota_wait={"metric": "<b>gpus</b>", "region": "us-central1", "requested": 8,
                         "usage": 6, "limit": 8})
    html = member_client.get(reverse("job-list")).content.decode()
    assert "<img src=x" not in html and "<script>steal" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;steal()&lt;/script&gt;" in html
    assert ("waiting for quota: &lt;b&gt;gpus&lt;/b&gt; in us-central1 (8 needed, 6 in use, "
            "limit 8)") in html
