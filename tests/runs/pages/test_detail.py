"""The job page: header, timeline, checkpoints, logs, the loss curve's data, polling."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.logs.models import LogLine, StepMetric
from controlplane.runs.models import Job, JobEvent, JobState
from controlplane.teams.models import Team


@pytest.fixture
def job(member: Any, team: Team, make_job: Callable[..., Job]) -> Job:
    job = make_job(team, member, name="gpt-tiny", last_step=40, total_steps=100,
                   last_loss=2.5, error_message="")
    t0 = timezone.now() - timedelta(minutes=5)
    JobEvent.objects.bulk_create([
        JobEvent(job=job, kind="state", timestamp=t0,
                 data={"from": "QUEUED", "to": "RUNNING", "error": "", "source": "reconcile"}),
        JobEvent(job=job, kind="run_started", timestamp=t0 + timedelta(seconds=1),
                 replica="workerpool0-0",
                 data={"rank": 0, "world_size": 2, "strategy": "ddp", "params": 1000,
                       "resumed_from_step": None}),
        JobEvent(job=job, kind="checkpoint_saved", timestamp=t0 + timedelta(seconds=30),
                 step=20, replica="workerpool0-0",
                 data={"step": 20, "path": "gs://bucket/job/step-20", "bytes": 3 * 1024 ** 2,
                       "seconds": 1.25}),
        JobEvent(job=job, kind="preempted", timestamp=t0 + timedelta(seconds=40), step=25,
                 data={"signal": "SIGTERM", "step": 25,
                       "checkpoint_path": "gs://bucket/job/step-25"}),
        JobEvent(job=job, attempt=1, kind="resumed", timestamp=t0 + timedelta(seconds=50),
                 step=25, data={"step": 25, "path": "gs://bucket/job/step-25"}),
    ])
    LogLine.objects.bulk_create([
        LogLine(job=job, timestamp=t0 + timedelta(seconds=i), severity=severity,
                replica="workerpool0-0", message=message, insert_id=f"log-{i}")
        for i, (severity, message) in enumerate([
            (200, "hello from rank 0"), (400, "NCCL slow"), (500, "Traceback: boom")])
    ])
    return job


def test_detail_renders_header_timeline_checkpoints_and_logs(member_client: Client,
                                                             job: Job) -> None:
    response = member_client.get(reverse("job-detail", args=[job.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "gpt-tiny" in html and "Vision" in html and "RUNNING" in html
    assert "40 / 100" in html
    # The timeline, newest first.
    assert html.index("resumed") < html.index("preempted") < html.index("run started")
    assert "SIGTERM" in html
    assert "gs://bucket/job/step-20" in html and "3.0\xa0MB" in html
    # Log lines with a colour per severity.
    assert "hello from rank 0" in html
    assert 'class="log-line sev-warning"' in html and 'class="log-line sev-error"' in html
    assert "Traceback: boom" in html
    # Live parts poll while the job is active; the chart and its data come from local files.
    assert html.count('hx-trigger="every 3s, cp-refresh"') == 4
    assert reverse("job-metrics", args=[job.pk]) in html
    assert "/static/vendor/plotly-4.1.2.min.js" in html
    assert "1 x n1-standard-4" in html


@pytest.mark.parametrize(("dims", "shown"), [
    ({"dp": 2, "tp": 2, "pp": 2}, "dp 2 x tp 2 x pp 2"),
    ({"tp": 8, "pp": 2.0, "dp": 4}, "dp 4 x tp 8 x pp 2"),  # the trainer's order, whole numbers
    ({"data": 2, "fsdp": 4, "tensor": 1}, "data 2 x fsdp 4 x tensor 1"),  # the JAX trainer's
    ({"expert": 4, "data": 2}, "data 2 x expert 4"),
])
def test_the_timeline_shows_the_mesh_axes_the_run_reported(
        member_client: Client, job: Job, dims: dict[str, Any], shown: str) -> None:
    JobEvent.objects.create(job=job, kind="run_started", timestamp=timezone.now(),
                            replica="workerpool0-0",
                            data={"rank": 0, "world_size": 8, "strategy": "fsdp", "dims": dims})
    html = member_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert shown in html
    assert "x tp  x" not in html and "dp  x" not in html  # no axis the run did not report


def test_terminal_job_stops_polling_and_offers_no_cancel(member_client: Client,
                                                         job: Job) -> None:
    job.state = JobState.FAILED
    job.error_message = "replica workerpool0-0 exited with code 1"
    job.save()
    html = member_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "every 3s" not in html
    assert 'data-active="false"' in html
    assert reverse("job-cancel", args=[job.pk]) not in html
    assert "exited with code 1" in html
    for name in ("header", "timeline", "checkpoints", "logs"):
        part = member_client.get(reverse("job-partial", args=[job.pk, name]))
        assert part.status_code == 200
        assert "hx-trigger" not in part.content.decode()


@pytest.mark.parametrize(("name", "expected"), [
    ("header", "gpt-tiny"), ("timeline", "checkpoint"), ("checkpoints", "step-20"),
    ("logs", "NCCL slow"),
])
def test_partials_render_and_keep_polling_while_active(member_client: Client, job: Job,
                                                       name: str, expected: str) -> None:
    response = member_client.get(reverse("job-partial", args=[job.pk, name]))
    html = response.content.decode()
    assert response.status_code == 200
    assert expected in html
    assert "<html" not in html
    assert f'hx-get="{reverse("job-partial", args=[job.pk, name])}"' in html


def test_unknown_partial_is_404(member_client: Client, job: Job) -> None:
    assert member_client.get(reverse("job-partial", args=[job.pk, "nope"])).status_code == 404


def test_log_panel_shows_the_latest_200_lines_oldest_first(member_client: Client,
                                                           job: Job) -> None:
    t0 = timezone.now()
    LogLine.objects.bulk_create([
        LogLine(job=job, timestamp=t0 + timedelta(seconds=i), message=f"line {i:03d}",
                insert_id=f"bulk-{i:03d}") for i in range(250)])
    html = member_client.get(reverse("job-partial", args=[job.pk, "logs"])).content.decode()
    assert "line 049" not in html and "hello from rank 0" not in html
    assert html.index("line 050") < html.index("line 249")


def test_metrics_json_returns_steps_in_order(member_client: Client, job: Job) -> None:
    t0 = timezone.now()
    # Stored out of order, and a second attempt that resumed at step 2.
    rows = [(1, 3, 2.0), (1, 1, 3.0), (1, 2, 2.5), (2, 3, 1.9), (2, 2, 2.4)]
    StepMetric.objects.bulk_create([
        StepMetric(job=job, attempt=attempt, step=step, loss=loss, lr=1e-3, tokens_per_s=10.0,
                   timestamp=t0 + timedelta(seconds=i), insert_id=f"s{i}")
        for i, (attempt, step, loss) in enumerate(rows)])

    response = member_client.get(reverse("job-metrics", args=[job.pk]))
    assert response.status_code == 200
    data = response.json()
    assert data["steps"] == [1, 2, 3, 2, 3]
    assert data["attempt"] == [1, 1, 1, 2, 2]
    assert data["loss"] == [3.0, 2.5, 2.0, 2.4, 1.9]
    assert data["lr"] == [1e-3] * 5 and data["tokens_per_s"] == [10.0] * 5
    assert data["state"] == "RUNNING" and data["active"] is True


def test_metrics_json_thins_long_runs_but_keeps_the_last_step(member_client: Client,
                                                              job: Job) -> None:
    t0 = timezone.now()
    StepMetric.objects.bulk_create([
        StepMetric(job=job, step=step, loss=1.0, timestamp=t0, insert_id=f"m{step}")
        for step in range(1, 10_002)])
    steps = member_client.get(reverse("job-metrics", args=[job.pk])).json()["steps"]
    assert len(steps) <= 4001
    assert steps == sorted(steps) and steps[0] == 1 and steps[-1] == 10_001


def test_metrics_json_carries_evaluations_restart_markers_and_wall_clock(
        member_client: Client, job: Job) -> None:
    t0 = timezone.now()
    StepMetric.objects.bulk_create([
        StepMetric(job=job, attempt=1, step=s, loss=3.0 - s / 10, timestamp=t0 +
                   timedelta(seconds=s), insert_id=f"w{s}") for s in (1, 2, 3)])
    job.events.create(kind="eval", attempt=1, step=2, timestamp=t0 + timedelta(seconds=2),
                      data={"step": 2, "metrics": {"val_loss": 2.75, "note": "text"}})
    job.events.create(kind="preempted", attempt=1, step=3, timestamp=t0 + timedelta(seconds=4),
                      replica="workerpool0-0", data={"signal": "SIGTERM"})
    job.events.create(kind="resumed", attempt=1, step=3, timestamp=t0 + timedelta(seconds=9),
                      data={"step": 3, "path": "gs://b/step-3"})
    data = member_client.get(reverse("job-metrics", args=[job.pk])).json()
    assert len(data["t"]) == 3 and data["t"][0] < data["t"][-1]
    assert data["evals"] == [{"attempt": 1, "step": 2, "t": data["evals"][0]["t"],
                              "metrics": {"val_loss": 2.75}}]
    kinds = [m["kind"] for m in data["markers"]]
    assert kinds[-2:] == ["preempted", "resumed"] and set(kinds) <= {
        "preempted", "resumed", "replica_restarted"}
    assert data["markers"][-2]["replica"] == "workerpool0-0"


def test_a_replica_restart_without_a_step_lands_on_the_step_its_attempt_had_reached(
        member_client: Client, job: Job) -> None:
    t0 = timezone.now()
    StepMetric.objects.bulk_create([
        StepMetric(job=job, attempt=a, step=s, loss=1.0, timestamp=t0 + timedelta(seconds=t),
                   insert_id=f"r{a}-{s}")
        for a, s, t in ((1, 10, 1), (1, 20, 2), (1, 30, 5), (2, 50, 3))])
    # Restarts are logged by Vertex, not the trainer: no step of their own.
    job.events.create(kind="replica_restarted", attempt=1, step=None, replica="workerpool0-1",
                      timestamp=t0 + timedelta(seconds=3), data={})
    job.events.create(kind="replica_restarted", attempt=1, step=None, replica="workerpool0-1",
                      timestamp=t0 - timedelta(hours=1), data={})
    data = member_client.get(reverse("job-metrics", args=[job.pk])).json()
    restarts = [m for m in data["markers"] if m["kind"] == "replica_restarted"]
    # Step 20 (not 30, logged later; not attempt 2's 50); before any step there is none.
    assert [m["step"] for m in restarts] == [None, 20]
    kept = [m for m in data["markers"] if m["kind"] != "replica_restarted"]
    assert [m["step"] for m in kept] == [25, 25]


def test_metrics_json_hands_the_chart_its_layout(
        member_client: Client, member: Any, team: Team, make_job: Callable[..., Job]) -> None:
    """The compile step left out, the markers' labels laid out, one colour per line
    (controlplane/logs/chart_data.py)."""
    job = make_job(team, member, name="tpu-run")
    t0 = timezone.now()
    StepMetric.objects.bulk_create([
        StepMetric(job=job, attempt=1, step=s, loss=3.0, step_time_s=60.0 if s == 1 else 0.2,
                   tokens_per_s=5.0 if s == 1 else 4000.0, timestamp=t0 + timedelta(seconds=s),
                   insert_id=f"c{s}") for s in range(1, 8)])
    job.events.create(kind="eval", attempt=1, step=5, timestamp=t0 + timedelta(seconds=5),
                      data={"step": 5, "metrics": {"val_loss": 2.9, "accuracy": 0.5}})
    job.events.create(kind="preempted", attempt=1, step=6, timestamp=t0 + timedelta(seconds=6),
                      data={"signal": "SIGTERM"})
    data = member_client.get(reverse("job-metrics", args=[job.pk])).json()
    assert data["compile_steps"] == [{"attempt": 1, "step": 1, "step_time_s": 60.0}]
    assert data["step_time_s"][0] is None and data["tokens_per_s"][0] is None
    assert [(m["step"], m["text"], m["lane"]) for m in data["marker_labels"]] == [
        (6, "preempted", 0)]
    assert data["eval_names"] == ["val_loss"]
    assert len(set(data["colors"])) == len(data["colors"]) == 2  # one attempt, one eval loss


def _queries_of(client: Client, path: str) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_the_panels_share_one_read_of_attempts_checkpoints_and_restarts(
        job: Job, member_client: Client) -> None:
    """The header, links, cost, checkpoint list, serving panel and timeline all show the
    job's attempts, checkpoints or restarts: the page reads each once, and a job with a
    longer history costs no more queries."""
    from controlplane.runs.models import JobAttempt, JobRestart

    path = reverse("job-detail", args=[job.pk])
    JobAttempt.objects.create(job=job, number=1, display_name=f"cp-{job.pk}-a1")
    before = _queries_of(member_client, path)
    t0 = timezone.now() - timedelta(minutes=4)
    for n in range(2, 6):
        JobAttempt.objects.create(job=job, number=n, display_name=f"cp-{job.pk}-a{n}")
        saved = JobEvent.objects.create(
            job=job, attempt=n, kind="checkpoint_saved", timestamp=t0 + timedelta(seconds=n),
            step=20 + n, data={"step": 20 + n, "path": f"gs://bucket/job/step-{20 + n}"})
        JobRestart.objects.create(job=job, attempt=n, ordinal=n, cause="preemption",
                                  occurred_at=t0 + timedelta(seconds=n), checkpoint=saved)
    Job.objects.filter(pk=job.pk).update(attempt=5, restarts=4)
    page = member_client.get(path).content.decode()
    assert "step-25" in page and f"cp-{job.pk}-a5" in page

    after = _queries_of(member_client, path)
    assert len(after) == len(before)
    assert sum('FROM "jobs_jobattempt"' in sql for sql in after) == 1
    assert sum('FROM "jobs_jobrestart"' in sql for sql in after) == 1
    # Read once (the timeline's own read leaves them out: NOT ... IN ('preemption_notice', ...).
    assert sum('FROM "jobs_jobevent"' in sql and "IN ('checkpoint_saved'" in sql
               for sql in after) == 1
