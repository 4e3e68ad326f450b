"""Cancel, clone, resubmit from a checkpoint, attempts and restarts through the REST API."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Membership, Role, Team
from tests.fakes import FakeBackend


@pytest.fixture
def api(client: Client, admin_user: Any) -> Client:
    client.force_login(admin_user)
    return client


def checkpoint_path(job: Job, step: int) -> str:
    return f"gs://b/job-{job.pk}/checkpoints/step-{step:08d}"


def _checkpoint(job: Job, step: int, storage: Callable[[str], str] | None = None) -> str:
    """A checkpoint_saved event; with `storage`, the committed folder is written too."""
    path = checkpoint_path(job, step)
    if storage is not None:
        storage(path)
    job.events.create(kind="checkpoint_saved", attempt=1, step=step,
                      data={"step": step, "path": path})
    return path


def test_cancel(api: Client, make_job: Callable[..., Job], backend: FakeBackend) -> None:
    job = make_job()
    response = api.post(f"/api/v1/jobs/{job.pk}/cancel/")
    assert response.status_code == 202 and response.json()["state"] == "CANCELLED"
    again = api.post(f"/api/v1/jobs/{job.pk}/cancel/")
    assert again.status_code == 409 and "already CANCELLED" in again.content.decode()


def test_clone_returns_a_body_the_api_accepts(api: Client, make_job: Callable[..., Job],
                                              backend: FakeBackend,
                                              django_capture_on_commit_callbacks: Any) -> None:
    job = make_job("bert", spot=True)
    body = api.get(f"/api/v1/jobs/{job.pk}/clone/").json()
    assert body["name"] == "bert-clone" and body["team"] == "vision"
    with django_capture_on_commit_callbacks(execute=False):
        created = api.post("/api/v1/jobs/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    clone = Job.objects.get(pk=created.json()["id"])
    assert clone.custom_job["jobSpec"]["workerPoolSpecs"] == \
        job.custom_job["jobSpec"]["workerPoolSpecs"]


def test_resubmit_from_a_chosen_checkpoint(api: Client, make_job: Callable[..., Job],
                                           backend: FakeBackend,
                                           django_capture_on_commit_callbacks: Any,
                                           checkpoint_storage: Callable[[str], str]) -> None:
    job = make_job("gpt", spot=True)
    _checkpoint(job, 100, checkpoint_storage)
    _checkpoint(job, 200, checkpoint_storage)
    missing = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 150},
                       content_type="application/json")
    assert missing.status_code == 400 and "[100, 200]" in missing.content.decode()
    with django_capture_on_commit_callbacks(execute=False):
        response = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 100},
                            content_type="application/json")
    assert response.status_code == 201, response.content
    new = Job.objects.get(pk=response.json()["id"])
    assert new.resubmitted_from == job and new.resume_from_step == 100
    assert new.resume_from.endswith("step-00000100") and new.name == "gpt-resumed"
    env = new.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"]
    assert {"name": "CP_RESUME_FROM", "value": new.resume_from} in env
    assert new.state == JobState.QUEUED and new.attempts.get().resume_step == 100


def test_attempts_and_restarts(api: Client, make_job: Callable[..., Job],
                               backend: FakeBackend) -> None:
    from controlplane.runs import lifecycle

    job = make_job()
    lifecycle.submit(job.pk)
    attempts = api.get(f"/api/v1/jobs/{job.pk}/attempts/").json()["results"]
    assert attempts[0]["number"] == 1 and attempts[0]["reason"] == "submit"
    assert attempts[0]["scheduling"] == "STANDARD" and attempts[0]["vertex_name"]
    assert api.get(f"/api/v1/jobs/{job.pk}/restarts/").json()["results"] == []
    detail = api.get(f"/api/v1/jobs/{job.pk}/").json()
    assert detail["restarts"] == 0


def test_who_may_do_what(client: Client, make_job: Callable[..., Job], team: Team,
                         backend: FakeBackend) -> None:
    job = make_job()
    viewer = get_user_model().objects.create_user(username="vi")
    Membership.objects.create(user=viewer, team=team, role=Role.VIEWER)
    client.force_login(viewer)
    assert client.get(f"/api/v1/jobs/{job.pk}/attempts/").status_code == 200
    assert client.get(f"/api/v1/jobs/{job.pk}/clone/").status_code == 200
    assert client.post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 403
    assert client.post(f"/api/v1/jobs/{job.pk}/resubmit/", {}).status_code == 403
    outsider = get_user_model().objects.create_user(username="out")
    client.force_login(outsider)
    assert client.get(f"/api/v1/jobs/{job.pk}/restarts/").status_code == 404
    assert client.post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 404


def test_the_job_page_shows_attempts_restarts_and_recoveries(
        client: Client, admin_user: Any, make_job: Callable[..., Job],
        backend: FakeBackend) -> None:
    from django.utils import timezone

    from controlplane.runs import lifecycle
    from tests.logs.test_restart_detection import Log

    job = make_job("llama", spot=True)
    lifecycle.submit(job.pk)
    name = job.current_attempt().vertex_name
    backend.set_state(name, "JOB_STATE_RUNNING", start_time=timezone.now())
    log = Log(job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    log.steps(1, 7)
    log.preemption(7)
    lifecycle.reconcile(job.pk)
    backend.set_state(name, "JOB_STATE_FAILED", end_time=timezone.now(), error_code=8,
                      error_message="STOCKOUT")
    lifecycle.reconcile(job.pk)
    client.force_login(admin_user)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "spot preemption" in page and "resumed from" in page
    assert "recovery</span> 1 of 3" in page and "failover" in page
    assert 'id="job-attempts"' in page and "stockout" in page
    checkpoint = job.events.get(kind="checkpoint_saved")
    assert f'href="#event-{checkpoint.pk}"' in page and f'id="event-{checkpoint.pk}"' in page
    header = client.get(f"/jobs/{job.pk}/partials/header/").content.decode()
    assert "Restarts" in header and "1 of 3 used" in header


def test_resubmit_offers_only_checkpoints_that_still_exist(
        api: Client, make_job: Callable[..., Job], backend: FakeBackend, admin_user: Any,
        checkpoint_storage: Callable[[str], str]) -> None:
    """Rotation deleted steps 100 and 200 (keep-last-1): the list, the page's choices and the
    API offer only 300; a resubmission from 100 is refused and names why."""
    job = make_job("gpt", spot=True)
    deleted = [_checkpoint(job, step) for step in (100, 200)]
    _checkpoint(job, 300, checkpoint_storage)
    for step, path in zip((100, 200), deleted, strict=True):
        job.events.create(kind="checkpoint_deleted", attempt=1, step=step,
                          data={"step": step, "path": path})
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED)
    refused = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 100},
                       content_type="application/json")
    assert refused.status_code == 400
    message = refused.json()["checkpoint_step"][0]
    assert "deleted by rotation" in message and "[300]" in message
    assert Job.objects.count() == 1
    panel = api.get(f"/jobs/{job.pk}/partials/checkpoints/").content.decode()
    assert "step-00000300" in panel and "step-00000100" not in panel
    header = api.get(f"/jobs/{job.pk}/partials/header/").content.decode()
    assert '<option value="300">' in header and 'value="100"' not in header
    listed = api.get(f"/api/v1/jobs/{job.pk}/").json()["checkpoints"]
    assert [(c["step"], c["path"]) for c in listed] == [(300, checkpoint_path(job, 300))]


def test_resubmit_checks_the_checkpoint_on_storage(
        api: Client, make_job: Callable[..., Job], backend: FakeBackend,
        checkpoint_storage: Callable[[str], str]) -> None:
    """The events say step 100 exists, storage says otherwise (deleted by hand, or its write
    never finished): refused, nothing created."""
    job = make_job("gpt", spot=True)
    path = _checkpoint(job, 100, checkpoint_storage)
    _checkpoint(job, 200)  # never written
    gone = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 200},
                    content_type="application/json")
    assert gone.status_code == 400 and "does not exist" in gone.content.decode()
    os.remove(f"{settings.CP_LOCAL_GCS_ROOT}/{path.removeprefix('gs://')}/COMMITTED")
    half = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 100},
                    content_type="application/json")
    assert half.status_code == 400 and "not a complete checkpoint" in half.content.decode()
    assert Job.objects.count() == 1
