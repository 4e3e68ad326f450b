"""The logs and metrics API and the job page's live parts, on data the follower stored."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from google.cloud import aiplatform_v1

from controlplane.backends.training import VertexBackend
from controlplane.logs import follower
from controlplane.logs.models import LogFailure, LogLine, StepMetric
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Membership, Role
from tests.localvertex.helpers import PARENT, custom_job, job_id, python_pool, wait_state
from tests.logs.conftest import AttemptFactory
from tests.logs.test_follower import FAST

TRAINER = r"""
import json, sys, time
print(json.dumps({"severity": "INFO", "event": "run_started", "message": "run started",
                  "rank": 0, "world_size": 1, "strategy": "ddp", "params": 10,
                  "resumed_from_step": None}), flush=True)
for step in range(1, 41):
    print(json.dumps({"severity": "INFO", "event": "step", "message": f"step {step}",
                      "step": step, "total_steps": 100, "loss": 4.0 / step, "lr": 1e-3,
                      "tokens_per_s": 2048.0, "step_time_s": 0.01}), flush=True)
    if step % 10 == 0:
        print(f"NCCL INFO step {step} all-reduce ok", flush=True)
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/app/trainers/trainer.py", line 131, in _step', file=sys.stderr)
print("    loss.backward()", file=sys.stderr)
print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
      "total capacity of 15.77 GiB of which 1.05 GiB is free.", file=sys.stderr, flush=True)
sys.exit(1)
"""


@pytest.fixture
def client_of(client: Client, user: Any, team: Any) -> Client:
    Membership.objects.create(user=user, team=team, role=Role.MEMBER)
    client.force_login(user)
    return client


@pytest.fixture(scope="module")
def oom_custom_job(log_emulator: Any) -> tuple[str, datetime]:
    """A real replica on the emulator prints steps and dies of a CUDA OOM, three times (the
    emulator restarts it twice, as Vertex does). Its CustomJob id and when it was created."""
    created = timezone.now()
    remote = log_emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("oom", [python_pool(TRAINER)]))
    wait_state(log_emulator.jobs, remote.name,
               aiplatform_v1.JobState.JOB_STATE_FAILED, timeout=60)
    return job_id(remote), created


@pytest.fixture
def trained(vertex: VertexBackend, oom_custom_job: tuple[str, datetime],
            make_attempt: AttemptFactory, django_capture_on_commit_callbacks: Any) -> Job:
    """The job of that CustomJob, one follower sweep later. Its attempt starts when the
    CustomJob was made: the follower reads an attempt's lines from its start, and the module's
    tests may run long after the CustomJob ended."""
    vertex_job_id, created = oom_custom_job
    attempt = make_attempt(created - timedelta(seconds=5), vertex_job_id=vertex_job_id)
    Job.objects.filter(pk=attempt.job_id).update(custom_job={"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1"}]}})
    # Each page's commit runs restart detection (the test's transaction never commits).
    with django_capture_on_commit_callbacks(execute=True):
        assert follower.follow(vertex, FAST).caught_up
    return Job.objects.get(pk=attempt.job_id)


def test_trainer_output_becomes_lines_metrics_progress_and_a_diagnosis(
        trained: Job, client_of: Client) -> None:
    assert trained.last_step == 40 and trained.total_steps == 100 and trained.restarts == 2
    assert StepMetric.objects.filter(job=trained).count() == 3 * 40
    failures = list(LogFailure.objects.filter(job=trained))
    assert len(failures) == 3
    assert {(f.kind, f.replica) for f in failures} == {("gpu_oom", "workerpool0-0")}
    assert failures[0].last_frame == ('File "/app/trainers/trainer.py", line 131, in _step: '
                                      "loss.backward()")

    data = client_of.get(reverse("job-metrics", args=[trained.pk])).json()
    assert data["steps"] == list(range(1, 41))  # each step once: the newest run's
    assert data["loss"][-1] == pytest.approx(0.1) and data["step_time_s"][0] == 0.01
    assert data["progress"]["last_step"] == 40 and data["progress"]["percent"] == 40
    assert data["progress"]["steps_per_s"] > 0 and data["progress"]["eta_s"] > 0
    assert data["progress"]["cost_so_far_micros"] is None  # the job has no price snapshot
    (diagnosis,) = data["failures"]
    assert diagnosis["title"] == "GPU out of memory" and "batch size" in diagnosis["fix"]
    assert diagnosis["count"] == 3
    assert diagnosis["summary"].startswith("torch.OutOfMemoryError")


def test_logs_api_filters_by_severity_text_and_replica(trained: Job, client_of: Client) -> None:
    url = reverse("api-job-logs", args=[trained.pk])
    everything = client_of.get(url, {"limit": 500}).json()
    assert everything["count"] == LogLine.objects.filter(job=trained).count() >= 3 * 46
    times = [r["timestamp"] for r in everything["results"]]
    assert times == sorted(times)
    errors = client_of.get(url, {"severity": "ERROR", "limit": 50}).json()["results"]
    assert errors[0]["message"] == "Traceback (most recent call last):"
    assert all(r["severity"] >= 500 for r in errors)
    assert sum(r["message"].startswith("Traceback") for r in errors) == 3
    nccl = client_of.get(url, {"q": "nccl info"}).json()
    assert nccl["count"] == 3 * 4
    assert client_of.get(url, {"replica": "workerpool1-0"}).json()["count"] == 0
    newest = client_of.get(url, {"order": "desc", "limit": 500}).json()["results"]
    assert newest == everything["results"][::-1]
    assert client_of.get(url, {"severity": "LOUD"}).status_code == 400


def test_logs_api_continues_after_a_line_already_seen(trained: Job, client_of: Client) -> None:
    url = reverse("api-job-logs", args=[trained.pk])
    first = client_of.get(url, {"limit": 10}).json()["results"]
    last = first[-1]
    rest = client_of.get(url, {"after": f"{last['timestamp']},{last['insert_id']}",
                               "limit": 1000}).json()["results"]
    everything = client_of.get(url, {"limit": 1000}).json()["results"]
    assert first + rest == everything


def test_metrics_api_series_by_name(trained: Job, client_of: Client) -> None:
    url = reverse("api-job-metrics", args=[trained.pk])
    body = client_of.get(url, {"name": ["loss", "tokens_per_s"]}).json()
    assert [s["name"] for s in body["series"]] == ["loss", "tokens_per_s"]
    loss = body["series"][0]
    assert loss["step"] == sorted(list(range(1, 41)) * 3) and loss["value"][0] == 4.0
    assert set(loss["attempt"]) == {1}
    thinned = client_of.get(url, {"max_points": 10}).json()
    assert thinned["thinned"] and thinned["series"][0]["step"][-1] == 40
    assert client_of.get(url, {"name": "accuracy"}).status_code == 400
    steps = client_of.get(reverse("api-job-steps", args=[trained.pk]), {"limit": 5}).json()
    assert steps["count"] == 120 and steps["results"][0]["span"] == 1


def test_log_panel_filters_and_follows(trained: Job, client_of: Client) -> None:
    url = reverse("job-partial", args=[trained.pk, "logs"])
    html = client_of.get(url, {"severity": "ERROR"}).content.decode()
    assert "CUDA out of memory" in html and "step 1" not in html
    assert '<option value="ERROR" selected>' in html
    assert '<option value="workerpool0-0">' in html
    html = client_of.get(url, {"q": "all-reduce"}).content.decode()
    assert html.count('class="log-line') == 3 * 4
    # A running job's panel polls with its filters; a finished one does not poll.
    Job.objects.filter(pk=trained.pk).update(state=JobState.RUNNING)
    html = client_of.get(url).content.decode()
    assert 'hx-trigger="every 3s, cp-refresh" hx-include="#log-filters"' in html
    assert 'id="log-follow"' in html
    page = client_of.get(reverse("job-detail", args=[trained.pk])).content.decode()
    assert 'id="metrics-chart"' in page and 'id="job-diagnosis"' in page
    assert reverse("job-metrics", args=[trained.pk]) in page


def test_other_teams_get_404(trained: Job, client: Client, django_user_model: Any) -> None:
    client.force_login(django_user_model.objects.create_user(username="eve"))
    for name in ("api-job-logs", "api-job-metrics", "api-job-steps"):
        assert client.get(reverse(name, args=[trained.pk])).status_code == 404
