"""Recovery and exactly-once submission in the lifecycle, against a scripted backend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.backends import errors
from controlplane.compose import submission
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobAttempt, JobState
from tests.fakes import FakeBackend

STOCKOUT = {"error_code": 8, "error_message": "The job was preempted 7 times (STOCKOUT)."}


def _name(job: Job) -> str:
    return Job.objects.get(pk=job.pk).current_attempt().vertex_name


def _ready(job: Job) -> None:
    """Skip the backoff: the attempt may be submitted now."""
    JobAttempt.objects.filter(job=job).update(not_before=timezone.now() - timedelta(seconds=1))


def _running(job: Job, backend: FakeBackend) -> str:
    lifecycle.submit(job.pk)
    name = _name(job)
    backend.set_state(name, "JOB_STATE_RUNNING", start_time=timezone.now())
    lifecycle.reconcile(job.pk)
    return name


def test_a_stockout_starts_a_new_attempt_on_the_fallback(
        make_job: Callable[..., Job], backend: FakeBackend, settings: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.CP_RECOVERY_FALLBACK = "FLEX_START,STANDARD"
    job = make_job(spot=True)
    assert job.recovery_strategy == "failover" and job.max_recoveries == 3
    first = _running(job, backend)
    job.events.create(kind="checkpoint_saved", attempt=1, step=40,
                      data={"step": 40, "path": "gs://b/j/checkpoints/step-00000040"})
    backend.set_state(first, "JOB_STATE_FAILED", end_time=timezone.now(), **STOCKOUT)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        lifecycle.reconcile(job.pk)
        lifecycle.reconcile(job.pk)  # a second sweep changes nothing

    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.attempt == 2 and job.recoveries == 1
    assert len(queued) == 1, "one submission queued, with the backoff as its countdown"
    one, two = job.attempts.order_by("number")
    assert (one.failure, one.error_code, one.vertex_state) == ("stockout", 8, "JOB_STATE_FAILED")
    assert (two.reason, two.scheduling, two.resume_step) == ("recovery", "STANDARD", 40)
    assert two.not_before > timezone.now() - timedelta(seconds=1)
    event = job.events.get(kind="recovery")
    assert "FLEX_START" in event.data["skipped"][0], "FLEX_START needs a GPU this job lacks"

    lifecycle.submit(job.pk)  # the message arrived early: still backing off
    assert len(backend.created) == 1
    _ready(job)
    lifecycle.submit(job.pk)
    lifecycle.submit(job.pk)
    assert len(backend.created) == 2
    created = backend.created[1]
    assert created["displayName"] == f"cp-{job.pk}-a2"
    assert created["labels"]["cp-attempt"] == "2"
    assert created["jobSpec"]["scheduling"]["strategy"] == "STANDARD"
    assert created["jobSpec"]["baseOutputDirectory"] == \
        backend.created[0]["jobSpec"]["baseOutputDirectory"], "resumes from the same folder"

    backend.set_state(_name(job), "JOB_STATE_SUCCEEDED", end_time=timezone.now())
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    states = list(job.events.filter(kind="state").values_list("data__to", flat=True))
    assert states == ["QUEUED", "RUNNING", "QUEUED", "SUCCEEDED"]


def test_recoveries_stop_at_the_limit(make_job: Callable[..., Job], backend: FakeBackend,
                                      settings: Any) -> None:
    settings.CP_MAX_RECOVERIES = 2
    job = make_job(spot=True)
    for number in (1, 2, 3):
        if number > 1:
            _ready(job)
        name = _running(job, backend)
        backend.set_state(name, "JOB_STATE_FAILED", end_time=timezone.now(), **STOCKOUT)
        lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.attempt == 3 and job.recoveries == 2
    assert job.attempts.count() == 3
    assert "2 recoveries" in job.events.get(kind="recovery_refused").data["why"]


@pytest.mark.parametrize(("code", "message"), [
    (3, "Unable to pull image us-docker.pkg.dev/p/r/missing:1: not found"),
    (7, "Permission 'storage.objects.get' denied on the output bucket"),
    (13, "The replica workerpool0-0 exited with a non-zero status of 1."),
])
def test_configuration_and_application_errors_are_not_retried(
        make_job: Callable[..., Job], backend: FakeBackend, code: int, message: str) -> None:
    job = make_job(spot=True)
    name = _running(job, backend)
    backend.set_state(name, "JOB_STATE_FAILED", end_time=timezone.now(), error_code=code,
                      error_message=message)
    lifecycle.reconcile(job.pk)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.attempts.count() == 1 and job.recoveries == 0
    assert len(backend.created) == 1


def test_an_invalid_spec_fails_once_at_submission(make_job: Callable[..., Job],
                                                  backend: FakeBackend) -> None:
    job = make_job(spot=True)
    backend.fail_creates = [errors.InvalidJobSpec("image us-docker.pkg.dev/x:1 not found")]
    lifecycle.submit(job.pk)
    lifecycle.submit(job.pk)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.attempts.get().failure == "config"
    assert backend.created == [] and job.recoveries == 0


def test_cancel_while_backing_off_needs_no_backend(make_job: Callable[..., Job],
                                                   backend: FakeBackend) -> None:
    job = make_job(spot=True)
    name = _running(job, backend)
    backend.set_state(name, "JOB_STATE_FAILED", end_time=timezone.now(), **STOCKOUT)
    lifecycle.reconcile(job.pk)
    assert lifecycle.request_cancel(job.pk)
    _ready(job)
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and len(backend.created) == 1


def test_a_job_failing_while_cancelling_is_not_recovered(make_job: Callable[..., Job],
                                                        backend: FakeBackend) -> None:
    job = make_job(spot=True)
    name = _running(job, backend)
    assert lifecycle.request_cancel(job.pk)
    backend.set_state(name, "JOB_STATE_FAILED", end_time=timezone.now(), **STOCKOUT)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.attempts.count() == 1


def test_a_lost_submission_is_requeued_at_a_measured_pace(
        make_job: Callable[..., Job], backend: FakeBackend, settings: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings.CP_RESUBMIT_AFTER_S = 30
    job = make_job()
    sent: list[str] = []
    monkeypatch.setattr("controlplane.runs.tasks.submit_job.apply_async",
                        lambda args, **_: sent.append(args[0]))
    lifecycle.reconcile(job.pk)
    assert sent == [], "its message may still be on its way"
    JobAttempt.objects.filter(job=job).update(
        submit_queued_at=timezone.now() - timedelta(seconds=31))
    lifecycle.reconcile(job.pk)
    lifecycle.reconcile(job.pk)
    assert sent == [str(job.pk)], "once per CP_RESUBMIT_AFTER_S, not once per sweep"


def test_a_crash_between_created_and_saved_is_repaired(make_job: Callable[..., Job],
                                                       backend: FakeBackend) -> None:
    job = make_job()
    backend.crash_after_create = True
    with pytest.raises(errors.TransientBackendError):
        lifecycle.submit(job.pk)
    assert _name(job) == ""
    JobAttempt.objects.filter(job=job).update(submit_queued_at=timezone.now() - timedelta(1))
    lifecycle.submit(job.pk)  # the repair's submission finds it
    assert len(backend.created) == 1 and _name(job) in backend.jobs
    assert job.events.filter(kind="submitted").count() == 1


def test_clone_and_resubmit_requests(make_job: Callable[..., Job]) -> None:
    job = make_job("exp", spot=True)
    body = lifecycle.clone_request(job)
    assert body["name"] == "exp-clone" and body["team"] == "vision"
    assert body["scheduling_strategy"] == "SPOT"
    again = submission.resubmit_request(job, "gs://b/j/checkpoints/step-00000040")
    assert again.env == {"CP_RESUME_FROM": "gs://b/j/checkpoints/step-00000040"}
    assert "team" not in again.to_dict() and again.name == "exp-resumed"
    assert (again.region, again.scheduling) == (job.region, "SPOT")
