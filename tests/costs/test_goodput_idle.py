"""A team's month of goodput counts the time its persistent resources (Ray clusters) were up
with nothing on them as `idle`, in accelerator-seconds and whole micro-dollars at the
cluster's hourly price, and its totals still add up exactly: billed time and dollars are its
jobs' plus its clusters' idle time (controlplane/clusters/idle_time.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.clusters.models import Cluster, RayJob
from controlplane.costs import spend
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team
from tests.costs.test_goodput_api import finished_job
from tests.fakes import FakeBackend

OCT1 = datetime(2026, 10, 1, tzinfo=UTC)
GPUS = 2 * 4  # two replicas of four A100s
HOURLY = 3_600_000  # $3.60 an hour: 1,000 micro-dollars a second


def hours(h: float) -> datetime:
    return OCT1 + timedelta(hours=h)


def cluster(team: Team, user: Any, name: str, running_since: datetime,
            deleted_at: datetime | None = None) -> Cluster:
    return Cluster.objects.create(
        team=team, created_by=user, name=name, region="us-central1", request={},
        resource={"resourcePools": [{"id": "gpu", "replicaCount": 2, "machineSpec": {
            "machineType": "a2-highgpu-4g", "acceleratorType": "NVIDIA_TESLA_A100",
            "acceleratorCount": 4}}]},
        ray_version="2.47.1", hourly_micros=HOURLY,
        state=Cluster.State.DELETED if deleted_at else Cluster.State.RUNNING,
        created_at=running_since - timedelta(hours=1), running_since=running_since,
        deleted_at=deleted_at)


def ray_job(c: Cluster, user: Any, created: datetime, ended: datetime | None) -> None:
    RayJob.objects.create(team=c.team, cluster=c, created_by=user, entrypoint=["true"],
                          created_at=created, ended_at=ended,
                          state=RayJob.State.SUCCEEDED if ended else RayJob.State.RUNNING)


def test_a_teams_month_counts_its_clusters_idle_time_and_still_adds_up(
        make_job: Callable[..., Job], backend: FakeBackend, admin_user: Any, team: Team,
        other_team: Team, client: Client) -> None:
    job = finished_job(make_job, backend, hours(12))
    Job.objects.filter(pk=job.pk).update(created_at=hours(11.5))
    # Up from before the month to 10:00 on the 1st: two overlapping Ray jobs (01:00-04:00
    # together) and a CustomJob placed on it (06:00-07:30); idle the other 5.5 hours.
    used = cluster(team, admin_user, "used", hours(-1), deleted_at=hours(10))
    ray_job(used, admin_user, hours(1), hours(3))
    ray_job(used, admin_user, hours(2), hours(4))
    Job.objects.create(team=team, created_by=admin_user, name="placed", request={},
                       project="p", region="us-central1", state=JobState.SUCCEEDED,
                       created_at=hours(6), ended_at=hours(7.5),
                       custom_job={"jobSpec": {"persistentResourceId": used.vertex_resource_id}})
    # Busy all along since it came up (a Ray job still running), and another team's idle one.
    busy = cluster(team, admin_user, "busy", hours(20))
    ray_job(busy, admin_user, hours(20), None)
    cluster(other_team, admin_user, "theirs", hours(0), deleted_at=hours(5))

    client.force_login(admin_user)
    url = reverse("api-team-goodput", args=[team.slug])
    month = client.get(url, {"month": "2026-10"}).json()
    each = client.get(reverse("api-job-goodput", args=[job.pk])).json()
    idle_s = 5.5 * 3600
    assert month["idle_resources"] == [
        {"name": f"Ray cluster used #{used.pk}", "accelerators": GPUS, "idle_seconds": idle_s,
         "accelerator_seconds": idle_s * GPUS, "cost_usd": 19.8, "cost_micros": 19_800_000},
        {"name": f"Ray cluster busy #{busy.pk}", "accelerators": GPUS, "idle_seconds": 0,
         "accelerator_seconds": 0, "cost_usd": 0, "cost_micros": 0}]
    by_name = {c["name"]: c for c in month["categories"]}
    assert by_name["idle"]["accelerator_seconds"] == idle_s * GPUS
    assert by_name["idle"]["cost_micros"] == 19_800_000
    # The rest is the jobs' (the placed job billed nothing of its own here): the totals are
    # theirs plus the idle time, to the second and the micro-dollar.
    assert month["billed_accelerator_seconds"] == each["billed_accelerator_seconds"] + \
        idle_s * GPUS
    billed = [c for c in month["categories"] if c["billed"]]
    assert abs(sum(c["accelerator_seconds"] for c in billed)
               - month["billed_accelerator_seconds"]) < 0.01
    assert sum(c["cost_micros"] for c in billed) == sum(
        c["cost_micros"] for c in each["categories"]) + 19_800_000
    assert month["top_badput"][0]["name"] == "idle"
    assert month["goodput"] == round(
        by_name["productive"]["accelerator_seconds"] / month["billed_accelerator_seconds"], 4)
    # Each month holds its own part: September the hour before midnight, August nothing.
    assert [r["idle_seconds"] for r in client.get(url, {"month": "2026-09"}).json()[
        "idle_resources"]] == [3600]
    assert client.get(url, {"month": "2026-08"}).json()["idle_resources"] == []


def test_the_team_costs_page_names_its_idle_cluster(admin_user: Any, team: Team,
                                                    client: Client) -> None:
    now = timezone.now()
    idle = cluster(team, admin_user, "spare", max(now - timedelta(minutes=1),
                                                  datetime.combine(spend.month_start(now),
                                                                   time.min, tzinfo=UTC)))
    client.force_login(admin_user)
    page = client.get(reverse("team-costs", args=[team.slug])).content.decode()
    listed = page.split('id="idle-resources"')[1].split("</ul>")[0]
    assert f"Ray cluster spare #{idle.pk}: up with nothing on it for" in listed
    assert 'data-category="idle"' in page.split('id="team-goodput"')[1]
