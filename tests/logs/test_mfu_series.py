"""MFU beside throughput: the metrics API's `mfu` series and the job page's chart, from
run_started and step events stored the way the follower stores them."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobAttempt, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user
from vertexplan.logparse.entries import LogEntry

T0 = datetime(2026, 5, 1, tzinfo=UTC)
_ids = itertools.count(1)
# Two a2-highgpu-8g replicas: 16 A100s (312 TFLOP/s bf16 each).
A100_X16 = {"jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
                    "acceleratorCount": 8},
    "replicaCount": "2"}]}}
STARTED = {"event": "run_started", "message": "rank 0/16 started", "rank": 0, "world_size": 16,
           "strategy": "ddp", "params": 10_745_088, "n_layer": 6, "n_head": 6, "d_model": 384,
           "seq_len": 256, "precision": "bf16", "resumed_from_step": None}
# 6 x 10,745,088 + 12 x 6 x 6 x 64 x 256 FLOPs per token, 1e6 tokens/s, 16 x 312e12 FLOP/s
EXPECTED = 71_548_416 * 1e6 / (16 * 312e12)


@pytest.fixture
def owner(db: None) -> tuple[Team, Any]:
    team = Team.objects.create(name="Vision", slug="vision")
    return team, make_user("ann", team, Role.MEMBER)


def job_with(owner: tuple[Team, Any], vertex_id: str, started: dict[str, Any]) -> Job:
    team, user = owner
    job = Job.objects.create(team=team, created_by=user, name="exp", request={},
                             custom_job=A100_X16, project="p", region="us-central1",
                             state=JobState.RUNNING)
    JobAttempt.objects.create(job=job, number=1, display_name=f"cp-{job.pk}-a1",
                              vertex_job_id=vertex_id)
    payloads = [started] + [
        {"event": "step", "message": f"step {n}", "step": n, "total_steps": 10, "loss": 1.0 / n,
         "lr": 1e-3, "tokens_per_s": 1_000_000.0 * n, "step_time_s": 0.1} for n in (1, 2, 3)]
    entries = []
    for payload in payloads:
        n = next(_ids)
        entries.append(LogEntry(insert_id=f"e{n}", timestamp=T0 + timedelta(seconds=n),
                                severity=200, job_id=vertex_id, task_name="workerpool0-0",
                                json_payload=payload, log_name="projects/p/logs/workerpool0-0"))
    store_entries(entries, {vertex_id: Target(job.pk, 1)})
    return job


def client_for(client: Client, owner: tuple[Team, Any]) -> Client:
    client.force_login(owner[1])
    return client


def test_api_mfu_series_from_run_started_and_steps(owner: tuple[Team, Any],
                                                  client: Client) -> None:
    job = job_with(owner, "901", STARTED)
    url = reverse("api-job-metrics", args=[job.pk])
    body = client_for(client, owner).get(url, {"name": ["tokens_per_s", "mfu"]}).json()
    throughput, mfu = body["series"]
    assert mfu["name"] == "mfu" and mfu["step"] == throughput["step"] == [1, 2, 3]
    assert mfu["value"] == pytest.approx([EXPECTED, 2 * EXPECTED, 3 * EXPECTED])
    assert mfu["reason"] is None
    assert "16 x NVIDIA_TESLA_A100 at 312 TFLOP/s bf16" in mfu["basis"]
    # The default set includes it.
    names = [s["name"] for s in client.get(url).json()["series"]]
    assert names == ["loss", "lr", "tokens_per_s", "step_time_s", "mfu"]


def test_mfu_is_null_with_the_reason_when_run_started_lacks_the_shape(
        owner: tuple[Team, Any], client: Client) -> None:
    bare = {k: v for k, v in STARTED.items() if k not in ("n_layer", "n_head", "d_model")}
    job = job_with(owner, "902", bare)
    client = client_for(client, owner)
    mfu = client.get(reverse("api-job-metrics", args=[job.pk]), {"name": "mfu"}).json()
    (series,) = mfu["series"]
    assert series["value"] == [None, None, None] and series["basis"] is None
    assert series["reason"] == ("attempt 1: run_started does not report the model's "
                                "n_layer (layers), n_head (attention heads), d_model (model "
                                "width)")
    data = client.get(reverse("job-metrics", args=[job.pk])).json()
    assert data["mfu"] == [None, None, None] and "n_layer" in data["mfu_reason"]


def test_job_page_has_the_mfu_chart_and_its_data(owner: tuple[Team, Any],
                                                 client: Client) -> None:
    job = job_with(owner, "903", STARTED)
    client = client_for(client, owner)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'id="mfu-chart"' in page and 'id="mfu-note"' in page
    data = client.get(reverse("job-metrics", args=[job.pk])).json()
    assert data["mfu"] == pytest.approx([EXPECTED, 2 * EXPECTED, 3 * EXPECTED], rel=1e-5)
    assert data["mfu_reason"] is None and "FLOPs/token" in data["mfu_basis"]
