"""Goodput in the API: a job's categories add up to its billed accelerator time and share its
bill in dollars; another team's job is not found; a team's month is the sum over its jobs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.costs import spend
from controlplane.logs.models import StepMetric
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobRestart, RestartCause
from controlplane.teams.models import Membership, Role, Team
from tests.fakes import FakeBackend
from vertexplan.goodput import CATEGORIES

MACHINES = 2  # chief + one worker, no accelerators: counted in machine-seconds


def finished_job(make_job: Callable[..., Job], backend: FakeBackend, start: datetime,
                 name: str = "exp") -> Job:
    """Ran 40 minutes from START: 2 minutes of start-up, then a step every 10 s with a
    checkpoint at step 60; preempted 30 s after step 90 and back 5 minutes later from step 60;
    steps 61-150 (61-90 again), then 30 s to finish."""
    job = make_job(name, spot=True)
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    backend.set_state(attempt.vertex_name, "JOB_STATE_RUNNING", start_time=start)
    lifecycle.reconcile(job.pk)
    first = [(n, start + timedelta(seconds=120 + 10 * n)) for n in range(1, 91)]
    preempted = first[-1][1] + timedelta(seconds=30)
    back = preempted + timedelta(minutes=5)
    second = [(n, back + timedelta(seconds=120 + 10 * (n - 60))) for n in range(61, 151)]
    StepMetric.objects.bulk_create(
        StepMetric(job=job, attempt=1, step=n, timestamp=at, insert_id=f"{name}-{i}")
        for i, (n, at) in enumerate(first + second))
    saved = job.events.create(kind="checkpoint_saved", attempt=1, step=60,
                              timestamp=first[59][1], data={"step": 60, "path": "gs://b/s60"})
    JobRestart.objects.create(job=job, attempt=1, replica="workerpool0-0", ordinal=1,
                              cause=RestartCause.PREEMPTION, occurred_at=preempted,
                              resumed_at=back, checkpoint=saved, resumed_from_step=60, step=90)
    end = second[-1][1] + timedelta(seconds=30)
    backend.set_state(attempt.vertex_name, "JOB_STATE_SUCCEEDED", end_time=end)
    lifecycle.reconcile(job.pk)
    return Job.objects.get(pk=job.pk)


def test_a_jobs_goodput_adds_up_to_its_bill(make_job: Callable[..., Job], backend: FakeBackend,
                                             admin_user: Any, client: Client) -> None:
    job = finished_job(make_job, backend, timezone.now() - timedelta(hours=2))
    client.force_login(admin_user)
    body = client.get(reverse("api-job-goodput", args=[job.pk])).json()
    assert body["status"] == "final" and body["accelerators"] == MACHINES
    by_name = {c["name"]: c for c in body["categories"]}
    assert list(by_name) == list(CATEGORIES)
    billed = [c for c in body["categories"] if c["billed"]]
    # Start-up 2 min + 900 s of steps + 30 s lost, restore 2 min + 900 s of steps + 30 s.
    run = (120 + 900 + 30) + (120 + 900 + 30)
    assert body["billed_accelerator_seconds"] == run * MACHINES
    assert abs(sum(c["accelerator_seconds"] for c in billed) - run * MACHINES) < 0.01
    assert body["replayed_steps"] == 30 and body["step_seconds"] == 10
    assert by_name["replayed_steps"]["accelerator_seconds"] == 30 * 10 * MACHINES
    assert by_name["productive"]["accelerator_seconds"] == 150 * 10 * MACHINES
    assert by_name["lost_progress"]["accelerator_seconds"] == 30 * MACHINES
    # Dollars: the job's bill shared by time, in whole micro-dollars that add up to it.
    cost = spend.cost_of(job)
    assert cost is not None and cost.billed > 0
    assert sum(c["cost_micros"] for c in billed) == cost.billed
    assert all(c["cost_usd"] == c["cost_micros"] / 1_000_000 for c in body["categories"])
    assert by_name["queued"]["billed"] is False and by_name["queued"]["cost_micros"] == 0
    assert body["goodput"] == round(1500 / run, 4)


def test_another_teams_job_is_not_found(make_job: Callable[..., Job], backend: FakeBackend,
                                        other_team: Team, client: Client) -> None:
    job = finished_job(make_job, backend, timezone.now() - timedelta(hours=2))
    stranger = get_user_model().objects.create_user(username="eve")
    Membership.objects.create(user=stranger, team=other_team, role=Role.ADMIN)
    client.force_login(stranger)
    assert client.get(reverse("api-job-goodput", args=[job.pk])).status_code == 404
    assert client.get(reverse("api-team-goodput", args=[job.team.slug])).status_code == 404


def test_a_teams_month_is_the_sum_over_its_jobs(make_job: Callable[..., Job],
                                                backend: FakeBackend, admin_user: Any,
                                                client: Client) -> None:
    now = timezone.now()
    jobs = [finished_job(make_job, backend, now - timedelta(hours=h), f"j{h}") for h in (2, 3)]
    client.force_login(admin_user)
    month = f"{now:%Y-%m}"
    team = client.get(reverse("api-team-goodput", args=[jobs[0].team.slug]),
                      {"month": month}).json()
    each = [client.get(reverse("api-job-goodput", args=[j.pk])).json() for j in jobs]
    assert team["month"] == month and team["jobs"] == 2
    assert team["billed_accelerator_seconds"] == sum(
        e["billed_accelerator_seconds"] for e in each)
    for position, category in enumerate(team["categories"]):
        parts = [e["categories"][position] for e in each]
        assert abs(category["accelerator_seconds"]
                   - sum(p["accelerator_seconds"] for p in parts)) < 0.01, category
        assert category["cost_micros"] == sum(p["cost_micros"] for p in parts), category
    assert [c["name"] for c in team["top_badput"]][:1] == ["replayed_steps"]
    assert {line["job"] for line in team["by_job"]} == {j.pk for j in jobs}
    # Another month has none of them; a month that is not YYYY-MM is refused, naming it.
    empty = client.get(reverse("api-team-goodput", args=[jobs[0].team.slug]),
                       {"month": "2001-01"}).json()
    assert empty["jobs"] == 0 and empty["goodput"] is None
    bad = client.get(reverse("api-team-goodput", args=[jobs[0].team.slug]), {"month": "2026-13"})
    assert bad.status_code == 400 and "YYYY-MM" in bad.json()["month"][0]


def test_the_job_page_and_the_team_costs_page_show_where_the_time_went(
        make_job: Callable[..., Job], backend: FakeBackend, admin_user: Any,
        client: Client) -> None:
    job = finished_job(make_job, backend, timezone.now() - timedelta(hours=2))
    client.force_login(admin_user)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    bar = page.split('id="job-goodput"')[1].split("</section>")[0]
    # productive 1500 of 2100 s (71.43%), replayed 300 s (14.29%), each with hours and dollars.
    assert 'class="gp-productive" data-width="71.43"' in bar
    assert 'class="gp-replayed_steps" data-width="14.29"' in bar
    assert '<tr data-category="replayed_steps"><td><span class="gp-swatch gp-replayed_steps">' \
        '</span>replayed steps</td><td class="num">0.167</td>' in bar
    assert "Goodput <strong" in bar and ">71%<" in bar
    team = client.get(reverse("team-costs", args=[job.team.slug])).content.decode()
    top = team.split('id="top-badput"')[1].split("</ol>")[0]
    assert top.index('data-category="replayed_steps"') < top.index('data-category="restore"')
