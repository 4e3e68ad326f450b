"""Hang and straggler detection on a followed job (issue 37), from log entries stored as the
follower stores them: a job silent past max(k x p95, floor) is flagged once, its replicas'
last lines kept, the team's Slack told, and, with restart_on_hang, cancelled and resumed from
its newest checkpoint; without it only alerted; steps again make it ok; a phase in progress is
not a hang; per-rank step times name a straggler. The team's admins set the rule through the
policy API, and the job's API record and page say its health. Two workers sweeping at once
record and alert it once."""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.logs import health
from controlplane.logs.models import StepMetric
from controlplane.logs.store import Target, store_entries
from controlplane.notifications.models import Notification, SlackChannel
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobAttempt, JobEvent, JobRestart, JobState
from controlplane.teams.models import Role, TeamPolicy
from tests.fakes import FakeBackend
from tests.logs.conftest import followed_job
from tests.people import make_user
from tests.runs.pages.conftest import CPU_CUSTOM_JOB
from vertexplan.logparse.entries import LogEntry

_ids = itertools.count(1)
T0 = datetime(2026, 5, 1, tzinfo=UTC)
STEP_S = 2.0
LAST_STEP_AT = T0 + timedelta(seconds=60 + 30 * STEP_S)
# A chief and one worker.
POOL = CPU_CUSTOM_JOB["jobSpec"]["workerPoolSpecs"][0]
TWO_POOLS = {**CPU_CUSTOM_JOB, "jobSpec": {**CPU_CUSTOM_JOB["jobSpec"],
                                           "workerPoolSpecs": [POOL, POOL]}}


def emit(job: Job, at: datetime, payload: dict[str, Any] | None = None, *,
         text: str = "", task: str = "workerpool0-0") -> None:
    n = next(_ids)
    entry = LogEntry(insert_id=f"h{n}", timestamp=at, severity=200, job_id="42", task_name=task,
                     json_payload=payload, text_payload=text or None,
                     log_name=f"projects/p/logs/{task}")
    store_entries([entry], {"42": Target(job.pk, 1)})


@pytest.fixture
def job(db: None, backend: FakeBackend) -> Job:
    """Running since T0, 30 steps every 2 s from T0 + 62 s, a checkpoint at step 20, and each
    replica's last words; its team alerts on Slack and hangs count after max(10 x 2 s, 60 s)."""
    job = followed_job(TWO_POOLS)
    remote = backend.create_custom_job({"displayName": "cp-1-a1", "jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                             "replicaCount": 1,
                             "containerSpec": {"imageUri": "python:3.11"}}]}})
    JobAttempt.objects.filter(job=job).update(vertex_name=remote.name, started_at=T0)
    Job.objects.filter(pk=job.pk).update(state_changed_at=T0, started_at=T0)
    TeamPolicy.objects.create(team=job.team, hang_k=10, hang_floor_s=60)
    channel = SlackChannel(team=job.team, name="ops", kind="webhook", notify_on=["preempted"])
    channel.set_secret("https://hooks.slack.com/services/T/B/x")
    channel.save()
    for step in range(1, 31):
        emit(job, T0 + timedelta(seconds=60 + step * STEP_S),
             {"event": "step", "message": f"step {step}", "step": step, "total_steps": 100,
              "loss": 1.0, "step_time_s": STEP_S})
        if step == 20:
            emit(job, T0 + timedelta(seconds=60 + step * STEP_S + 0.5),
                 {"event": "checkpoint_saved", "message": "saved", "step": 20,
                  "path": f"{job.output_uri}/checkpoints/step-20"})
    emit(job, LAST_STEP_AT + timedelta(seconds=0.2), text="waiting in all_reduce",
         task="workerpool1-0")
    job.refresh_from_db()
    return job


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def page_of(job: Job) -> str:
    client = Client()
    client.force_login(job.created_by)
    return client.get(reverse("job-detail", args=[job.pk])).content.decode()


def at(seconds_after_last_step: float) -> datetime:
    return LAST_STEP_AT + timedelta(seconds=seconds_after_last_step)


def test_a_hung_job_is_flagged_once_alerted_and_resumed_from_its_checkpoint(
        job: Job, backend: FakeBackend, django_capture_on_commit_callbacks: Any) -> None:
    TeamPolicy.objects.filter(team=job.team).update(restart_on_hang=True)
    hung_name = job.current_attempt().vertex_name
    assert health.check(job.pk, now=at(59)) == "ok"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert health.check(job.pk, now=at(61)) == "suspected_hang"
    for callback in callbacks:  # the cancel of the hung attempt (the submit goes to Celery)
        if getattr(callback, "func", None) is lifecycle.cancel_remote:
            callback()
    assert backend.cancelled == [hung_name]
    job.refresh_from_db()
    assert (job.state, job.attempt, job.health) == (JobState.QUEUED, 2, "ok")
    event = job.events.get(kind="suspected_hang")
    assert event.data["last_lines"] == {"workerpool0-0": "step 30",
                                        "workerpool1-0": "waiting in all_reduce"}
    assert event.data["threshold_s"] == 60 and event.data["restart"] == "restarting"
    assert "p95 step interval 2.0 s" in event.data["why"]
    restart = JobRestart.objects.get(job=job)
    assert (restart.cause, restart.attempt, restart.step) == ("hang", 1, 30)
    new = JobAttempt.objects.get(job=job, number=2)
    assert (new.reason, new.resume_step) == ("hang", 20)
    assert JobAttempt.objects.get(job=job, number=1).ended_at == at(61)
    alert = Notification.objects.get(job=job)
    assert (alert.event, alert.key) == ("preempted", f"job-{job.pk}:hang-a1")
    assert "waiting in all_reduce" in alert.detail["note"]
    # A second sweep (or a second worker) finds the job moved on: nothing more.
    assert health.check(job.pk, now=at(90)) is None
    assert job.events.filter(kind="suspected_hang").count() == 1


def test_without_the_restart_policy_a_hang_is_only_alerted_and_steps_make_it_ok(
        job: Job, backend: FakeBackend) -> None:
    assert health.check(job.pk, now=at(61)) == "suspected_hang"
    assert health.check(job.pk, now=at(75)) == "suspected_hang"
    job.refresh_from_db()
    assert (job.state, job.attempt, job.health) == (JobState.RUNNING, 1, "suspected_hang")
    assert job.events.filter(kind="suspected_hang").count() == 1
    assert "restart_on_hang is off" in job.events.get(kind="suspected_hang").data["restart"]
    assert not JobRestart.objects.filter(job=job).exists() and backend.cancelled == []
    assert Notification.objects.filter(job=job).count() == 1
    page = page_of(job)
    assert 'id="job-health"' in page and "Suspected hang" in page
    assert "last line of workerpool1-0: waiting in all_reduce" in page
    emit(job, at(80), {"event": "step", "message": "step 31", "step": 31, "loss": 1.0})
    assert health.check(job.pk, now=at(81)) == "ok"
    job.refresh_from_db()
    assert job.health == "ok" and job.health_detail == {}


def test_an_eval_in_progress_is_not_a_hang(job: Job) -> None:
    emit(job, at(1), {"event": "phase", "message": "eval", "phase": "eval", "seconds": 0,
                      "begins": True, "step": 30})
    assert health.check(job.pk, now=at(900)) == "ok"
    emit(job, at(901), {"event": "phase", "message": "eval done", "phase": "eval",
                        "seconds": 900.0, "step": 30})
    assert health.check(job.pk, now=at(960)) == "ok"
    assert health.check(job.pk, now=at(962)) == "suspected_hang"


def test_per_rank_step_times_name_a_straggler(job: Job) -> None:
    for n, step in enumerate((10, 20, 30)):
        emit(job, at(0.1 * (n + 1)), {"event": "step", "message": f"step {step}", "step": step,
                                      "rank_step_time_s": [0.2, 0.21, 0.35, 0.19]})
    assert job.events.filter(kind="rank_step_times").count() == 3
    assert health.check(job.pk, now=at(5)) == "straggler"
    job.refresh_from_db()
    assert job.health_detail["ranks"] == [2]
    event = job.events.get(kind="straggler")
    assert "rank 2" in event.data["why"]
    page = page_of(job)
    assert "<strong>Straggler</strong>: rank 2 (1.71x the median)" in page
    assert not Notification.objects.filter(job=job).exists()
    assert health.check(job.pk, now=at(6)) == "straggler"
    assert job.events.filter(kind="straggler").count() == 1


def test_admins_set_the_hang_rule_and_the_job_record_says_its_health(job: Job) -> None:
    team = job.team
    url = f"/api/v1/teams/{team.slug}/policy/"
    admin, member = make_user("ada", team, Role.ADMIN), job.created_by
    done = api(admin).patch(url, {"hang_k": 5, "hang_floor_s": 120, "restart_on_hang": True},
                            format="json")
    assert done.status_code == 200, done.content
    assert (done.json()["hang_k"], done.json()["hang_floor_s"],
            done.json()["restart_on_hang"]) == (5, 120, True)
    for field, bad, said in (("hang_k", 1, "1: a whole number from 2 to 100"),
                             ("hang_floor_s", 30, "30: a whole number from 60 to 86,400"),
                             ("restart_on_hang", "yes", "Must be a valid boolean.")):
        refused = api(admin).patch(url, {field: bad, "allow_web_access": True}, format="json")
        assert refused.status_code == 400 and said in refused.json()[field][0], refused.json()
    assert TeamPolicy.objects.filter(team=team, hang_k=5, hang_floor_s=120, restart_on_hang=True,
                                     allow_web_access=False).exists()
    assert api(member).patch(url, {"hang_k": 3}, format="json").status_code == 403
    TeamPolicy.objects.filter(team=team).update(restart_on_hang=False)
    assert health.check(job.pk, now=at(121)) == "suspected_hang"
    record = api(member).get(f"/api/v1/jobs/{job.pk}/").json()
    assert record["health"] == "suspected_hang"
    assert record["health_detail"]["threshold_s"] == 120 and record["health_detail"]["why"]


def test_two_workers_at_once_record_and_alert_a_hang_once(job: Job,
                                                           transactional_db: None) -> None:
    done: list[str | None] = []

    def sweep() -> None:
        try:
            done.append(health.check(job.pk, now=at(61)))
        finally:
            connection.close()

    workers = [threading.Thread(target=sweep) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    assert done == ["suspected_hang", "suspected_hang"]
    assert job.events.filter(kind="suspected_hang").count() == 1
    assert Notification.objects.filter(job=job).count() == 1


def test_before_its_first_steps_a_job_gets_the_start_up_its_shape_calls_for(
        db: None, backend: FakeBackend) -> None:
    """Four replicas compiling their first step, resuming from a 6 GB checkpoint: 3 x (60 s
    + 80 s image pull + 2 doublings x 15 s + 300 s compile + 30 s restore) = 1,500 s of
    silence allowed (vertexplan/health.py), not the team's 60 s floor."""
    pool = {**POOL, "replicaCount": "4", "containerSpec": {
        "imageUri": "img", "command": ["python", "-m", "trainers.train"],
        "args": ["--compile-blocks"]}}
    job = followed_job({**CPU_CUSTOM_JOB, "jobSpec": {**CPU_CUSTOM_JOB["jobSpec"],
                                                      "workerPoolSpecs": [pool]}})
    emit(job, T0 - timedelta(minutes=10),
         {"event": "checkpoint_saved", "message": "saved", "step": 20, "bytes": 6_000_000_000,
          "path": f"{job.output_uri}/checkpoints/step-20"})
    JobAttempt.objects.filter(job=job).update(started_at=T0, resume_step=20)
    Job.objects.filter(pk=job.pk).update(state_changed_at=T0, started_at=T0)
    TeamPolicy.objects.create(team=job.team, hang_k=10, hang_floor_s=60)
    assert health.check(job.pk, now=T0 + timedelta(seconds=1499)) == "ok"
    assert health.check(job.pk, now=T0 + timedelta(seconds=1501)) == "suspected_hang"
    event = Job.objects.get(pk=job.pk).events.get(kind="suspected_hang")
    assert event.data["threshold_s"] == 1500 and "start-up allowance" in event.data["why"]


def test_a_reconcile_page_reads_and_judges_each_job_as_alone(job: Job) -> None:
    """health.check_many (a reconcile sweep's page of jobs, its logs read in one query a kind
    for the page) reads for each job what check() reads for it: its current attempt's
    newest steps, activity, per-rank reports and resume step, none of another job's."""
    for n, step in enumerate((10, 20, 30)):
        emit(job, at(0.1 * (n + 1)), {"event": "step", "message": f"step {step}", "step": step,
                                      "rank_step_time_s": [0.2, 0.21, 0.35, 0.19]})
    other = Job.objects.create(team=job.team, created_by=job.created_by, name="other",
                               request={}, custom_job=TWO_POOLS, project="p",
                               region="us-central1", state=JobState.RUNNING,
                               state_changed_at=T0, attempt=2)
    for number in (1, 2):
        JobAttempt.objects.create(job=other, number=number, display_name=f"o-a{number}",
                                  resume_step=20 if number == 2 else None)
        StepMetric.objects.bulk_create([
            StepMetric(job=other, attempt=number, step=step, insert_id=f"o{number}-{step}",
                       timestamp=T0 + timedelta(seconds=10 * number + step))
            for step in range(1, 4)])
        JobEvent.objects.create(job=other, attempt=number, kind="run_started",
                                timestamp=T0 + timedelta(seconds=number))
    page = health._PageReads(list(Job.objects.filter(pk__in=[job.pk, other.pk])))
    for one in (job, other):
        alone, paged = health._JobReads(one), health._PagedReads(one, page)
        assert alone.step_times() and alone.newest_activity() is not None
        assert [alone.step_times(), alone.newest_activity(), alone.rank_reports(),
                alone.resume_step()] == [paged.step_times(), paged.newest_activity(),
                                         paged.rank_reports(), paged.resume_step()]
    assert health._PagedReads(other, page).resume_step() == 20
    assert health.check_many([job.pk, other.pk], now=at(5))[job.pk] == "straggler"
    job.refresh_from_db()
    assert job.health_detail["ranks"] == [2]
