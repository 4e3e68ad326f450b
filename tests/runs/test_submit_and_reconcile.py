"""Submission exactly once and reconciliation, against a scripted backend."""

from __future__ import annotations

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth import get_user_model
from django.utils import timezone

from controlplane.backends import errors
from controlplane.compose import submission, validation
from controlplane.core import signals
from controlplane.runs import lifecycle, reconcile, tasks
from controlplane.runs.models import Job, JobAttempt, JobState
from controlplane.teams.models import Team
from tests.fakes import FakeBackend


@pytest.fixture
def job(db: None, backend: FakeBackend, django_capture_on_commit_callbacks) -> Job:
    team = Team.objects.create(name="Vision", slug="vision")
    user = get_user_model().objects.create(username="ann")
    body = {"name": "exp", "chief": {"machine_type": "n1-standard-4"},
            "workers": {"replica_count": 1}}
    checked = validation.check(validation.read_request(body), team)
    assert checked.ok, checked.errors
    # The on-commit submit is captured, not run: each test drives the lifecycle itself.
    with django_capture_on_commit_callbacks(execute=False):
        return submission.create_job(team=team, user=user, checked=checked)


def test_submit_twice_creates_one_custom_job(job: Job, backend: FakeBackend) -> None:
    lifecycle.submit(job.pk)
    lifecycle.submit(job.pk)
    assert len(backend.created) == 1
    created = backend.created[0]
    assert created["displayName"] == f"cp-{job.pk}-a1"
    assert created["labels"] == {"cp-job": str(job.pk), "cp-attempt": "1", "cp-team": "vision"}
    assert created["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"].endswith(
        f"/vision/job-{job.pk}")
    job.refresh_from_db()
    assert job.current_attempt().vertex_name in backend.jobs


def test_a_crash_after_create_is_repaired_by_looking_up_first(job: Job,
                                                              backend: FakeBackend) -> None:
    backend.crash_after_create = True
    with pytest.raises(errors.TransientBackendError):
        lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.current_attempt().vertex_name == "", "nothing saved: the transaction rolled back"
    lifecycle.submit(job.pk)  # the retry
    assert len(backend.created) == 1, "found, not created again"
    assert job.current_attempt().vertex_name in backend.jobs


def test_an_invalid_spec_fails_the_job_once(job: Job, backend: FakeBackend) -> None:
    backend.fail_creates = [errors.InvalidJobSpec("image not found")]
    lifecycle.submit(job.pk)
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and "image not found" in job.error_message
    assert backend.created == []


def test_reconcile_follows_the_backend_and_terminal_is_final(job: Job,
                                                             backend: FakeBackend) -> None:
    lifecycle.submit(job.pk)
    name = Job.objects.get(pk=job.pk).current_attempt().vertex_name
    started = timezone.now()
    backend.set_state(name, "JOB_STATE_RUNNING", start_time=started)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.RUNNING and job.started_at == started

    ended = timezone.now()
    backend.set_state(name, "JOB_STATE_FAILED", error_code=13, error_message="replica died",
                      end_time=ended)
    lifecycle.reconcile(job.pk)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.error_message == "replica died"
    assert job.ended_at == ended

    # A stale observation: the backend answers with an older, non-terminal state of the job
    # (a lagging replica of Vertex's state, a read served before the failure landed).
    backend.set_state(name, "JOB_STATE_RUNNING", error_code=0, error_message="",
                      end_time=None)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.error_message == "replica died"
    assert job.ended_at == ended
    # Nor can a direct call move a finished job.
    assert not job.update_state(JobState.RUNNING)
    states = list(job.events.filter(kind="state").values_list("data__to", flat=True))
    assert states == ["QUEUED", "RUNNING", "FAILED"]


def test_cancel_before_submission_needs_no_backend(job: Job, backend: FakeBackend) -> None:
    assert lifecycle.request_cancel(job.pk)
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and backend.created == []


def test_cancel_a_submitted_job(job: Job, backend: FakeBackend,
                                django_capture_on_commit_callbacks) -> None:
    lifecycle.submit(job.pk)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert lifecycle.request_cancel(job.pk)
    assert len(callbacks) == 1, "the backend call is queued once the state is committed"
    lifecycle.send_cancel(job.pk)
    name = Job.objects.get(pk=job.pk).current_attempt().vertex_name
    assert backend.cancelled == [name]
    backend.set_state(name, "JOB_STATE_CANCELLED", error_code=1, error_message="CANCELED")
    lifecycle.reconcile(job.pk)
    assert Job.objects.get(pk=job.pk).state == JobState.CANCELLED


def test_a_sweep_whose_time_is_up_stops_instead_of_going_on(
        job: Job, backend: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker raises SoftTimeLimitExceeded inside the sweep at its soft limit: the
    per-job error handling must let it through, or the sweep runs on until the worker kills
    it at the hard limit."""
    lifecycle.submit(job.pk)
    # Ended on Vertex: the per-job code records it (a job as its row says is handed on with
    # its page, in the next test).
    backend.set_state(Job.objects.get(pk=job.pk).current_attempt().vertex_name,
                      "JOB_STATE_SUCCEEDED", end_time=timezone.now())
    reached: list[int] = []

    def time_is_up(job_id: int, listed: object = None) -> None:
        reached.append(job_id)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(lifecycle, "reconcile", time_is_up)
    with pytest.raises(SoftTimeLimitExceeded):
        tasks.reconcile_jobs()
    assert reached == [job.pk]


def test_a_sweep_whose_time_is_up_in_a_page_of_steady_jobs_stops_too(
        job: Job, backend: FakeBackend) -> None:
    """The same with the job as its row says (QUEUED on Vertex too): its page's follow-ups
    (signals.jobs_reconciled) let the time limit through instead of retrying job by job."""
    lifecycle.submit(job.pk)
    reached: list[list[int]] = []

    def time_is_up(job_ids: list[int], **_: object) -> None:
        reached.append(job_ids)
        raise SoftTimeLimitExceeded()

    signals.jobs_reconciled.connect(time_is_up, dispatch_uid="test.time_is_up")
    try:
        with pytest.raises(SoftTimeLimitExceeded):
            tasks.reconcile_jobs()
    finally:
        signals.jobs_reconciled.disconnect(dispatch_uid="test.time_is_up")
    assert reached == [[job.pk]]


def test_a_region_the_backend_cannot_reach_leaves_the_other_jobs_reconciled(
        job: Job, backend: FakeBackend) -> None:
    """The fake serves one region and has no other: listing the stray job's region fails as
    its Get would, and the sweep goes on with the rest."""
    lifecycle.submit(job.pk)
    backend.set_state(Job.objects.get(pk=job.pk).current_attempt().vertex_name,
                      "JOB_STATE_RUNNING", start_time=timezone.now())
    stray = Job.objects.create(team=job.team, created_by=job.created_by, name="stray",
                               request={}, custom_job={}, project="p", region="asia-east1",
                               state=JobState.RUNNING)
    JobAttempt.objects.create(job=stray, number=1, display_name=f"cp-{stray.pk}-a1",
                              region="asia-east1",
                              vertex_name="projects/p/locations/asia-east1/customJobs/1")
    assert reconcile.sweep() == 1
    assert Job.objects.get(pk=job.pk).state == JobState.RUNNING
    assert Job.objects.get(pk=stray.pk).state == JobState.RUNNING
