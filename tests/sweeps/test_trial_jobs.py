"""Each trial gets its own job (kind trial) once it has a CustomJob: made exactly once, its
state, start and end following the trial's, its attempt followed by the log follower and its
output stored as any job's; never reconciled, cancelled, cloned, billed or listed as a job."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.costs import spend
from controlplane.logs.follower import followed_targets, open_cursors
from controlplane.logs.models import LogLine, StepMetric
from controlplane.logs.options import follow_config
from controlplane.logs.store import store_entries
from controlplane.runs import lifecycle as runs_lifecycle
from controlplane.runs import tasks as runs_tasks
from controlplane.runs.models import Job, JobKind, JobState
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import Sweep, SweepState
from controlplane.teams.models import Team
from tests.fakes import FakeTuningBackend
from tests.sweeps.conftest import sweep_body
from tests.sweeps.test_lifecycle import trial
from vertexplan.logparse.entries import LogEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(team: Team, member: Any, tuning_backend: FakeTuningBackend,
            django_capture_on_commit_callbacks: Any) -> Sweep:
    body = sweep_body()
    checked = lifecycle.check(body, team)
    with django_capture_on_commit_callbacks(execute=False):
        sweep = lifecycle.record(team=team, user=member, request=body, checked=checked)
    lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    tuning_backend.set_tuning(sweep.vertex_name, state="JOB_STATE_RUNNING",
                              start_time=timezone.now(),
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "ACTIVE", 5e-3)])
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    return sweep


def test_each_trial_with_a_custom_job_gets_one_job(running: Sweep) -> None:
    lifecycle.reconcile(running.pk)  # again: nothing made twice
    jobs = Job.objects.filter(kind=JobKind.TRIAL).order_by("pk")
    assert jobs.count() == 2
    first, second = (running.trials.get(trial_id=n) for n in ("1", "2"))
    assert first.job.name == "lr-sweep-trial-1" and first.job.team == running.team
    attempt = first.job.attempts.get()
    assert attempt.vertex_name == first.custom_job and attempt.vertex_job_id == "100"
    # It writes under the sweep's folder, in the trial's own subfolder, as Vertex has it do.
    prefix = first.job.custom_job["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"]
    assert prefix.endswith(f"/vision/sweep-{running.pk}/1/")
    assert first.job.state == JobState.SUCCEEDED
    assert first.job.started_at == first.started_at and first.job.ended_at == first.ended_at
    assert attempt.ended_at == first.ended_at
    assert second.job.state == JobState.RUNNING and second.job.ended_at is None
    assert list(first.job.events.filter(kind="state").values_list("data__to", flat=True)) == [
        "QUEUED", "RUNNING", "SUCCEEDED"]


def test_a_trial_without_a_custom_job_has_no_job_yet(running: Sweep, tuning_backend) -> None:
    requested = trial("3", "REQUESTED", 2e-3)
    requested = type(requested)(**{**requested.__dict__, "custom_job": ""})
    tuning_backend.set_tuning(running.vertex_name, trials=[
        trial("1", "SUCCEEDED", 1e-3, 2.5), trial("2", "ACTIVE", 5e-3), requested])
    lifecycle.reconcile(running.pk)
    assert running.trials.get(trial_id="3").job is None


def test_trial_jobs_end_with_their_trials(running: Sweep, tuning_backend) -> None:
    tuning_backend.set_tuning(running.vertex_name, state="JOB_STATE_SUCCEEDED",
                              end_time=timezone.now(),
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "INFEASIBLE", 5e-3)])
    lifecycle.reconcile(running.pk)
    failed = running.trials.get(trial_id="2").job
    assert failed.state == JobState.FAILED and "exit 3" in failed.error_message
    assert failed.attempts.get().ended_at is not None


def test_a_cancelled_sweep_cancels_its_trials_jobs(running: Sweep, tuning_backend) -> None:
    assert lifecycle.request_cancel(running.pk)
    tuning_backend.set_tuning(running.vertex_name, state="JOB_STATE_CANCELLED",
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "INFEASIBLE", 5e-3)])
    lifecycle.reconcile(running.pk)
    running.refresh_from_db()
    assert running.state == SweepState.CANCELLED
    assert running.trials.get(trial_id="2").job.state == JobState.CANCELLED


def test_trial_jobs_are_not_on_the_job_path(running: Sweep, tuning_backend, member: Any
                                           ) -> None:
    job = running.trials.get(trial_id="2").job
    runs_tasks.reconcile_jobs()
    runs_lifecycle.reconcile(job.pk)
    runs_lifecycle.submit(job.pk)
    assert not runs_lifecycle.request_cancel(job.pk)
    job.refresh_from_db()
    # Reconciled as a job, it would have been asked of the backend (which has no such
    # CustomJob) and failed.
    assert job.state == JobState.RUNNING and job.reconciled_at is None
    assert tuning_backend.created == []  # nothing submitted as a CustomJob
    # Never in the team's spend as a job: the sweep counts it.
    Job.objects.filter(pk=job.pk).update(cost_micros=5_000_000)
    running.refresh_from_db()
    assert running.cost_micros > 0
    assert spend.month_spent(running.team) == running.cost_micros
    assert spend.refresh(job.pk) is None


def test_the_api_lists_trial_jobs_only_when_asked(running: Sweep, member: Any) -> None:
    client = APIClient()
    client.force_authenticate(member)
    assert client.get("/api/v1/jobs/").json()["count"] == 0
    listed = client.get("/api/v1/jobs/", {"kind": "trial"}).json()
    assert listed["count"] == 2 and {j["kind"] for j in listed["results"]} == {"trial"}
    assert client.get("/api/v1/jobs/", {"kind": "all"}).json()["count"] == 2
    bad = client.get("/api/v1/jobs/", {"kind": "sweeps"})
    assert bad.status_code == 400 and "kind" in bad.json()
    job = running.trials.get(trial_id="1").job
    detail = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert detail["kind"] == "trial" and detail["origin"]["api"].endswith(
        f"/api/v1/sweeps/{running.pk}/")
    assert client.get(f"/api/v1/jobs/{job.pk}/steps/").status_code == 200
    assert client.get(f"/api/v1/jobs/{job.pk}/events/").status_code == 200
    cancel = client.post(f"/api/v1/jobs/{job.pk}/cancel/")
    assert cancel.status_code == 400 and "sweep" in " ".join(cancel.json()["kind"])
    assert client.get(f"/api/v1/jobs/{job.pk}/clone/").status_code == 404
    sweep = client.get(f"/api/v1/sweeps/{running.pk}/").json()
    assert [t["job"] for t in sweep["trials"]] == [
        t.job_id for t in running.trials.order_by("number")]


def test_pages_link_trials_to_their_jobs(running: Sweep, member: Any) -> None:
    client = Client()
    client.force_login(member)
    jobs = [t.job_id for t in running.trials.order_by("number")]
    page = client.get(f"/sweeps/{running.pk}/").content.decode()
    assert f'href="/jobs/{jobs[0]}/"' in page
    assert f'href="/jobs/compare/?ids={jobs[0]},{jobs[1]}"' in page
    job_page = client.get(f"/jobs/{jobs[0]}/").content.decode()
    assert f"/sweeps/{running.pk}/#trial-1" in job_page and "Cancel</button>" not in job_page
    assert f"/jobs/{jobs[0]}/" not in client.get("/").content.decode()
    assert f"/jobs/{jobs[0]}/" in client.get("/", {"kind": "trial"}).content.decode()


def _entry(custom_job_id: str, n: int, at: datetime, payload: dict[str, Any]) -> LogEntry:
    return LogEntry(insert_id=f"e{n}", timestamp=at, severity=200, job_id=custom_job_id,
                    task_name="workerpool0-0", json_payload=payload)


def test_the_follower_follows_a_trial_and_stores_its_output(running: Sweep,
                                                            settings: Any) -> None:
    trial_row = running.trials.get(trial_id="2")
    config = follow_config()
    cursors = open_cursors(running.project, timezone.now(), config)
    assert trial_row.job.attempts.get().pk in {c.attempt_id for c in cursors}
    targets = followed_targets(running.project, config)
    prefix = trial_row.job.custom_job["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"]
    at = timezone.now() - timedelta(seconds=30)
    store_entries([
        _entry("200", 1, at, {"event": "step", "step": 1, "total_steps": 4, "loss": 3.0,
                              "message": "step 1"}),
        _entry("200", 2, at + timedelta(seconds=1),
               {"event": "checkpoint_saved", "step": 1, "path": f"{prefix}checkpoints/step-1",
                "message": "saved"}),
    ], targets)
    job = Job.objects.get(pk=trial_row.job_id)
    assert list(StepMetric.objects.filter(job=job).values_list("step", "loss")) == [(1, 3.0)]
    assert job.events.filter(kind="checkpoint_saved").count() == 1
    assert LogLine.objects.filter(job=job).count() == 2
    assert job.last_step == 1 and job.total_steps == 4
