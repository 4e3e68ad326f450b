"""GET /api/v1/jobs/groups/: the job list grouped by a tag key, a configuration key or the
sweep, after the list's filters and within the caller's teams: each group's jobs by state,
best and mean last loss, cost in micro-dollars, running time, newest jobs and links; a bad
`group_by` is a 400 naming it; the number of queries does not grow with the groups."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.runs import groups
from controlplane.runs.models import Job, JobKind, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user

URL = "/api/v1/jobs/groups/"


def make(team: Team, user: Any, name: str, *, lr: str = "0.001", tags: dict[str, str] | None = None,
         **fields: Any) -> Job:
    request = {"name": name, "strategy": "ddp", "args": ["--preset", "tiny", f"--lr={lr}"],
               "chief": {"machine_type": "n1-standard-4"}}
    return Job.objects.create(team=team, created_by=user, name=name, request=request,
                              custom_job={}, project="p", region="us-central1",
                              tags=tags or {}, **fields)


@pytest.fixture
def member(team: Team) -> Any:
    return make_user("ann", team, Role.MEMBER)


@pytest.fixture
def api(member: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(member)
    return client


@pytest.fixture
def runs(team: Team, member: Any, other_team: Team) -> dict[str, Job]:
    start = timezone.now() - timedelta(hours=3)
    made = {
        "a1": make(team, member, "a1", tags={"experiment": "warmup"}, state=JobState.SUCCEEDED,
                   last_loss=1.5, cost_micros=1_250_000, started_at=start,
                   ended_at=start + timedelta(hours=1)),
        "a2": make(team, member, "a2", lr="0.01", tags={"experiment": "warmup"},
                   state=JobState.FAILED, last_loss=2.5, cost_micros=250_000,
                   lost_micros=50_000, started_at=start, ended_at=start + timedelta(minutes=30)),
        "a3": make(team, member, "a3", tags={"experiment": "warmup", "owner": "ann"},
                   state=JobState.RUNNING, last_loss=None, cost_micros=0),
        "b1": make(team, member, "b1", lr="3e-4", tags={"experiment": "long-ctx"},
                   state=JobState.SUCCEEDED, last_loss=1.0, cost_micros=4_000_000),
        "none": make(team, member, "none", state=JobState.QUEUED),
    }
    # Another team's job in the same experiment is never counted.
    make(other_team, make_user("oscar", other_team, Role.ADMIN), "theirs",
         tags={"experiment": "warmup"}, cost_micros=9_000_000_000)
    return made


def test_jobs_are_grouped_by_a_tag_with_each_groups_aggregate(api: APIClient,
                                                              runs: dict[str, Job]) -> None:
    answer = api.get(URL, {"group_by": "tag:experiment"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["group_by"] == "tag:experiment" and body["more"] is False
    assert [g["value"] for g in body["groups"]] == ["warmup", "long-ctx", None]
    warmup = body["groups"][0]
    assert warmup["jobs"] == 3
    assert warmup["states"] == {"SUCCEEDED": 1, "FAILED": 1, "RUNNING": 1}
    assert warmup["best_loss"] == 1.5 and warmup["mean_loss"] == 2.0
    assert warmup["cost_micros"] == 1_500_000 and warmup["lost_micros"] == 50_000
    assert warmup["running_seconds"] == 5400
    assert [j["name"] for j in warmup["newest"]] == ["a3", "a2", "a1"]
    assert warmup["jobs_url"].endswith("/api/v1/jobs/?tag=experiment%3Dwarmup")
    ids = ",".join(str(runs[n].pk) for n in ("a3", "a2", "a1"))
    assert warmup["compare_url"].endswith(f"/jobs/compare/?ids={ids.replace(',', '%2C')}")
    # The jobs without the tag are one group, which no filter of the list can name.
    assert body["groups"][2]["jobs"] == 1 and body["groups"][2]["jobs_url"] is None
    # The group's link lists exactly its jobs.
    listed = api.get(warmup["jobs_url"]).json()["results"]
    assert {r["name"] for r in listed} == {"a1", "a2", "a3"}


def test_grouping_comes_after_the_filters_and_by_a_config_key(api: APIClient,
                                                               runs: dict[str, Job]) -> None:
    body = api.get(URL, {"group_by": "config:lr", "state": "succeeded"}).json()
    assert {g["value"]: g["jobs"] for g in body["groups"]} == {"0.001": 1, "0.0003": 1}
    body = api.get(URL, {"group_by": "config:lr", "tag": "experiment=warmup"}).json()
    assert {g["value"]: g["jobs"] for g in body["groups"]} == {"0.001": 2, "0.01": 1}
    # Its link keeps the request's filters beside the group's own.
    listed = api.get(body["groups"][0]["jobs_url"]).json()["results"]
    assert {r["name"] for r in listed} == {"a1", "a3"}
    # A group by the very filter asked for cannot be linked (one tag filter at a time).
    body = api.get(URL, {"group_by": "tag:experiment", "tag": "owner=ann"}).json()
    assert [(g["value"], g["jobs_url"]) for g in body["groups"]] == [("warmup", None)]


def test_trials_group_by_their_sweep(api: APIClient, team: Team, member: Any,
                                     runs: dict[str, Job]) -> None:
    for sweep, losses in ((7, (0.5, 0.7)), (8, (0.9,))):
        for i, loss in enumerate(losses):
            Job.objects.create(team=team, created_by=member, name=f"s{sweep}-t{i}",
                               kind=JobKind.TRIAL, request={"sweep": sweep, "trial": str(i)},
                               custom_job={}, project="p", region="us-central1",
                               last_loss=loss, state=JobState.SUCCEEDED)
    body = api.get(URL, {"group_by": "sweep"}).json()
    assert body["group_by"] == "sweep"
    assert [(g["value"], g["jobs"], g["best_loss"]) for g in body["groups"]] == [
        ("7", 2, 0.5), ("8", 1, 0.9)]


@pytest.mark.parametrize("asked", [
    "", "experiment", "tag:", "tag:Experiment", "tag:a b", "config:lr;drop table",
    "config:env..x", "config:" + "k" * 101, "label:x",
])
def test_a_bad_group_by_is_refused_naming_it_and_what_is_valid(api: APIClient, runs: Any,
                                                                asked: str) -> None:
    answer = api.get(URL, {"group_by": asked})
    assert answer.status_code == 400, answer.content
    said = answer.json()["group_by"][0]
    assert "write tag:KEY" in said and "config:KEY" in said and "sweep" in said


def test_a_bad_filter_beside_grouping_is_refused_naming_it(api: APIClient, runs: Any) -> None:
    answer = api.get(URL, {"group_by": "tag:experiment", "config": "lr~1"})
    assert answer.status_code == 400 and "config" in answer.json()


def test_the_groups_cost_two_queries_whatever_their_number(api: APIClient, team: Team,
                                                           member: Any, runs: Any,
                                                           monkeypatch: Any) -> None:
    def queries() -> tuple[int, dict[str, Any]]:
        with CaptureQueriesContext(connection) as captured:
            answer = api.get(URL, {"group_by": "tag:experiment"})
        assert answer.status_code == 200
        return len(captured.captured_queries), answer.json()

    api.get(URL, {"group_by": "tag:experiment"})  # the rate limiter's first-request housekeeping
    few, _ = queries()
    for i in range(12):
        make(team, member, f"x{i}", tags={"experiment": f"e{i}"})
    many, body = queries()
    assert len(body["groups"]) == 15 and many == few
    # Past the limit: the largest groups, and a word that there are more.
    monkeypatch.setattr(groups, "MAX_GROUPS", 2)
    capped, body = queries()
    assert capped == few
    assert [g["value"] for g in body["groups"]] == ["warmup", "e0"] and body["more"] is True
    assert body["limit"] == 2
    assert [j["name"] for j in body["groups"][1]["newest"]] == ["x0"]


def pools(*specs: tuple[int, Any]) -> dict[str, Any]:
    """A CustomJob's worker pools from (accelerators per replica, replicas) pairs; an empty
    pool ({}) where a pair is None, as Vertex leaves a slot unused."""
    return {"jobSpec": {"workerPoolSpecs": [
        {} if spec is None else
        {"machineSpec": {"machineType": "a2-highgpu-4g", "acceleratorType": "NVIDIA_TESLA_A100",
                         "acceleratorCount": spec[0]} if spec[0] else
         {"machineType": "n1-standard-4"}, "replicaCount": spec[1]}
        for spec in specs]}}


def test_each_group_counts_its_accelerator_hours(api: APIClient, team: Team,
                                                 member: Any) -> None:
    """Accelerators per replica x replicas, every pool, x running time (to now while running):
    GPU and TPU pools count, CPU pools and a job not started count nothing."""
    now = timezone.now()
    for name, experiment, custom_job, ran in (
            # 4 GPUs on the chief, 3 replicas of 4 (an int64 is a string in Vertex's JSON),
            # an unused slot: 16 accelerators for an hour.
            ("ddp", "big", pools((4, 1), None, (4, "3")), timedelta(hours=1)),
            # 8 TPU chips on one host for half an hour, still running.
            ("tpu", "big", pools((8, 1)), None),
            ("cpu", "big", pools((0, 2)), timedelta(hours=5)),
            ("queued", "big", pools((8, 4)), "not started"),
            ("cpu-only", "small", pools((0, 1)), timedelta(hours=2)),
            ("bare", "small", {}, timedelta(hours=2))):
        fields: dict[str, Any] = {}
        if ran == "not started":
            pass
        elif ran is None:
            fields = {"state": JobState.RUNNING, "started_at": now - timedelta(minutes=30)}
        else:
            fields = {"state": JobState.SUCCEEDED, "started_at": now - ran - timedelta(hours=1),
                      "ended_at": now - timedelta(hours=1)}
        job = make(team, member, name, tags={"experiment": experiment}, **fields)
        Job.objects.filter(pk=job.pk).update(custom_job=custom_job)
    body = api.get(URL, {"group_by": "tag:experiment"}).json()
    hours = {g["value"]: g["accelerator_hours"] for g in body["groups"]}
    # 16 x 1 h + 8 x 0.5 h (the running job's half hour read to now, seconds later).
    assert 20.0 <= hours["big"] < 20.1 and hours["small"] == 0.0, hours
    assert groups.accelerator_hours_text(hours["big"]).endswith(" GPU-h")
    assert groups.accelerator_hours_text(0.0) == "\N{EN DASH}"
    assert groups.accelerator_hours_text(0.05) == "0.050 GPU-h"
    assert groups.accelerator_hours_text(1234.56) == "1,234.6 GPU-h"
