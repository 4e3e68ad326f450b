"""The hot fragments' exact HTML: the job list's rows, the timeline's items, the checkpoint rows
and the log panel's lines, each drawn by the template tag the pages call.

The expected markup is what these fragments wrote when they were written in Python, byte for
byte, for inputs that take every branch (each kind of event, a failure with its diagnosis, a job
waiting for quota, values with markup in them): the pages, their scripts (job_detail.js writes
log lines the same way) and the browser tests read this markup."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from controlplane.logs.queries import TailLine
from controlplane.logs.templatetags import logs_ui
from controlplane.runs.checkpoints import Checkpoint
from controlplane.runs.models import Job, JobEvent, JobRestart, JobState
from controlplane.runs.templatetags import jobs_ui
from controlplane.teams.models import Team

T = datetime(2026, 5, 1, 12, 30, 45, 123456, tzinfo=UTC)
MARKUP = '<b>"x" & \'y\'</b>'


def event(kind: str, step: int | None = None, replica: str = "workerpool0-0", /,
          **data: Any) -> dict[str, Any]:
    return {"event": JobEvent(pk=41, job_id=1, attempt=2, kind=kind, timestamp=T,
                              replica=replica, step=step, data=data)}


def restart(**fields: Any) -> dict[str, Any]:
    return {"restart": JobRestart(**{"pk": 7, "job_id": 1, "attempt": 1, "ordinal": 1,
                                     "cause": "preemption", "occurred_at": T, **fields})}


TIMELINE: dict[str, dict[str, Any]] = {
    "state": event("state", **{"from": "PENDING", "to": "RUNNING", "source": "poll"}),
    "state cancelled": event("state", to="CANCELLED", error="by ann"),
    "state failed": event("state", **{"from": "RUNNING", "to": "FAILED", "error": MARKUP}),
    "checkpoint saved": event("checkpoint_saved", 50, path="gs://b/s", bytes=1048576,
                              seconds=0.44),
    "checkpoint saved bare": event("checkpoint_saved", None, step=60, path="gs://b/t"),
    "checkpoint deleted": event("checkpoint_deleted", 50, path="gs://b/s"),
    "resumed": event("resumed", 7, path="gs://p"),
    "preempted": event("preempted", signal="SIGTERM", checkpoint_path="gs://c"),
    "preempted at a step": event("preempted", 12, ""),
    "run started": event("run_started", rank=0, world_size=8, strategy="fsdp",
                         resumed_from_step=40, dims={"tensor": 2, "data": 2.0, "zz": 3}),
    "run started bare": event("run_started", rank=1, world_size=2, dims="2x2"),
    "run finished": event("run_finished", 100, final_loss=1.23456, wall_s=33.6),
    "replica restarted": event("replica_restarted", text=MARKUP),
    "eval": event("eval", 10, metrics={"acc": 0.5, MARKUP: MARKUP}),
    "eval without metrics": event("eval", 10, metrics=[1]),
    "another kind": event(MARKUP, num_processes=4, source="x", note=MARKUP, step=3),
    "recovery": event("recovery", recovery=1, max=3, scheduling="SPOT", region="us-east1",
                      resume_step=40, delay_s=30, why="preempted", skipped=["a region", MARKUP]),
    "recovery bare": event("recovery", skipped="not a list"),
    "recovery refused": event("recovery_refused", why="no more tries"),
    "submitted": event("submitted", vertex_name="projects/p/x", scheduling="FLEX_START",
                       region="eu", resume_step=40, resume_path="gs://b/40"),
    "submitted bare": event("submitted", vertex_name="projects/p/y", scheduling="SPOT"),
    "restart resumed": restart(replica="workerpool0-0", signal="S" * 200, step=45,
                               resumed_from_step=40, checkpoint_id=41, steps_lost=5,
                               resumed_at=T),
    "restart one step lost": restart(cause="crash", resumed_from_step=3, steps_lost=1,
                                     replica=MARKUP, signal=MARKUP),
    "restart from the beginning": restart(cause="stockout", step=0, resumed_at=T),
    "restart waiting": restart(cause="crash"),
}


def jobs() -> list[Job]:
    team, user = Team(pk=1, name="Vision & co", slug="vision"), User(pk=1, username="ann")
    pool = {"machineSpec": {"machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100",
                            "acceleratorCount": 1}, "replicaCount": "2"}

    def job(pk: int, state: str, **fields: Any) -> Job:
        return Job(**{"pk": pk, "team": team, "created_by": user, "name": f"exp-{pk}",
                      "state": state, "custom_job": {"jobSpec": {"workerPoolSpecs": [pool]}},
                      "created_at": T - timedelta(hours=pk), **fields})

    failed = job(2, JobState.FAILED, started_at=T - timedelta(hours=3), ended_at=T,
                 error_message="ignored: the diagnosis says more", lost_micros=420_000,
                 cost_micros=1_234_567)
    failed.diagnosis = {"title": "Out of memory", "summary": "CUDA out of memory " * 6,
                        "fix": "Lower the batch size " * 8 + MARKUP}
    return [
        job(1, JobState.RUNNING, started_at=T - timedelta(seconds=75), last_step=40,
            total_steps=1000, last_loss=2.5, restarts=2, cost_micros=99),
        failed,
        job(3, JobState.FAILED, name=MARKUP, error_message=MARKUP + "e" * 1100,
            started_at=T - timedelta(days=3), ended_at=T - timedelta(days=1)),
        job(4, JobState.WAITING_FOR_QUOTA,
            quota_wait={"metric": "nvidia_a100_gpus", "region": "us-central1", "limit": 8,
                        "usage": 8, "requested": 2}),
        job(5, JobState.WAITING_FOR_QUOTA, quota_wait={"region": "eu-west4", "limit": None}),
        job(6, JobState.WAITING_FOR_QUOTA, quota_wait=None),
        job(7, JobState.SUCCEEDED, started_at=T - timedelta(hours=30),
            ended_at=T - timedelta(hours=2), last_step=1000, total_steps=1000, last_loss=0.125),
        job(8, JobState.QUEUED),
    ]


CHECKPOINTS = [Checkpoint(50, "gs://b/s", 1, T, {"bytes": 2048, "seconds": 1.26}),
               Checkpoint(0, MARKUP, 2, T, {"bytes": None}), Checkpoint(3, "gs://b/z", 2, T, {})]
LINES = [TailLine(T, 500, 'workerpool0-0"><b>', "<script>alert('x')</script> & done",
                  insert_id='a"<1>'),
         TailLine(T + timedelta(microseconds=999), 0, "", "plain", "a2"),
         TailLine(T, 150, "workerpool1-0", "debug", "a3")]


def drawn(name: str, zone: str) -> str:
    """The fragment `name` as a reader in `zone` sees it, the clock at T."""
    renders: dict[str, Callable[[], str]] = {
        "job rows": lambda: jobs_ui.job_rows(jobs()),
        "checkpoint rows": lambda: jobs_ui.checkpoint_rows(CHECKPOINTS),
        "log lines": lambda: logs_ui.log_lines(LINES),
        "timeline": lambda: jobs_ui.timeline_items(list(TIMELINE.values())),
        **{f"timeline: {case}": (lambda item=item: jobs_ui.timeline_items([item]))
           for case, item in TIMELINE.items()},
    }
    with timezone.override(zone), mock.patch("django.utils.timezone.now", return_value=T):
        return str(renders[name]())


# {"zone": {"fragment": html}}, as the Python writers wrote them before these fragments became
# Jinja2 templates.
EXPECTED = {(name, zone): html for zone, fragments in
            json.loads((Path(__file__).parent / "fragment_markup.json").read_text()).items()
            for name, html in fragments.items()}
ZONES = ("UTC", "America/New_York", "Asia/Kolkata")


@pytest.mark.parametrize(("name", "zone"), sorted(EXPECTED))
def test_each_fragment_writes_the_markup_it_always_wrote(name: str, zone: str) -> None:
    assert drawn(name, zone) == EXPECTED[name, zone]


def test_every_case_is_held() -> None:
    names = {"job rows", "checkpoint rows", "log lines", "timeline",
             *(f"timeline: {case}" for case in TIMELINE)}
    assert set(EXPECTED) == {(name, zone) for name in names for zone in ZONES}
