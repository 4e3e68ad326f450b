"""A job Vertex refuses for quota, against the real emulator through Google's clients: it waits
visibly (which quota, where, the numbers), is tried again only after its backoff, runs once
the quota is raised, is announced once, and can be cancelled while it waits. Before submitting,
validate shows the job's need beside the quota left, spot and on-demand apart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from controlplane.backends import base, quotas
from controlplane.backends.training import VertexBackend
from controlplane.compose import submission, validation
from controlplane.notifications.models import Notification
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobAttempt, JobState
from controlplane.teams.models import Team
from tests.compose.test_compose_page import form_data
from tests.localvertex.helpers import FAST_FLAGS, PROJECT, EmulatorProcess
from tests.notifications.test_slack import channel

T4 = "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"


@pytest.fixture(scope="module")
def quota_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    emu = EmulatorProcess(tmp_path_factory.mktemp("quota") / "data",
                          [*FAST_FLAGS, "--quota",
                           "custom_model_training_nvidia_t4_gpus@us-central1=2",
                           "--quota", "custom_model_training_preemptible_nvidia_t4_gpus=8"])
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def vertex(settings: Any, quota_emulator: EmulatorProcess, db: None) -> Iterator[VertexBackend]:
    settings.VERTEX_EMULATOR_ADDR = quota_emulator.address
    settings.VERTEX_EMULATOR_TOKEN = quota_emulator.token
    settings.VERTEX_PROJECT = PROJECT
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    settings.CP_QUOTA_CACHE_S = 0
    base.get_backend.cache_clear()
    with quota_emulator.admin() as admin:
        admin.set_quota("custom_model_training_nvidia_t4_gpus", 2, region="us-central1")
    yield base.get_backend()
    base.get_backend.cache_clear()
    quotas.clear_cache()


def t4_body(name: str, gpus: int = 4, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": ["python", "-c", "import time; time.sleep(30)"],
            "args": [], "chief": {"machine_type": "n1-standard-8",
                                  "accelerator_type": "NVIDIA_TESLA_T4",
                                  "accelerator_count": gpus}, **extra}


@pytest.fixture
def make_t4_job(team: Team, admin_user: Any, vertex: VertexBackend,
                django_capture_on_commit_callbacks: Any) -> Callable[..., Job]:
    def make(name: str, gpus: int = 4, **extra: Any) -> Job:
        checked = validation.check(validation.read_request(t4_body(name, gpus, **extra)), team)
        assert checked.ok, checked.errors
        with django_capture_on_commit_callbacks(execute=False):
            return submission.create_job(team=team, user=admin_user, checked=checked)
    return make


def test_a_job_over_quota_waits_visibly_then_runs_when_raised(
        make_t4_job: Callable[..., Job], team: Team, quota_emulator: EmulatorProcess,
        client: Client, admin_user: Any) -> None:
    channel(team, ["quota"])
    job = make_t4_job("over-quota", 4)
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.WAITING_FOR_QUOTA
    wait = job.quota_wait
    assert (wait["metric"], wait["region"], wait["limit"], wait["usage"], wait["requested"]) \
        == (T4, "us-central1", 2, 0, 4)
    assert wait["refusals"] == 1 and not job.error_message
    attempt = job.current_attempt()
    assert attempt.not_before > timezone.now() and not attempt.vertex_name
    # Within its backoff nothing asks Vertex again, however often it is poked.
    for _ in range(3):
        lifecycle.submit(job.pk)
        lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.quota_wait["refusals"] == 1
    client.force_login(admin_user)
    header = client.get(f"/jobs/{job.pk}/partials/header/").content.decode()
    assert "Waiting for quota" in header and T4 in header
    assert "it needs 4, 0 in use, limit 2" in header
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert api["state"] == "WAITING_FOR_QUOTA" and api["quota_wait"]["limit"] == 2
    # Refused again after its backoff: the wait doubles; still one message.
    JobAttempt.objects.filter(pk=attempt.pk).update(not_before=timezone.now())
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.quota_wait["refusals"] == 2
    assert Notification.objects.filter(job=job, event="quota").count() == 1
    assert "requested 4, in use 0, limit 2" in Notification.objects.get(job=job).detail["note"]
    # The quota is raised: the next try creates it.
    with quota_emulator.admin() as admin:
        admin.set_quota("custom_model_training_nvidia_t4_gpus", 8, region="us-central1")
    JobAttempt.objects.filter(pk=attempt.pk).update(not_before=timezone.now())
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.current_attempt().vertex_name
    assert job.quota_wait["ended_at"]
    states = [e.data["to"] for e in job.events.filter(kind="state")]
    assert states == ["QUEUED", "WAITING_FOR_QUOTA", "QUEUED"]
    lifecycle.request_cancel(job.pk)
    lifecycle.send_cancel(job.pk)


def test_a_waiting_job_is_cancelled_at_once(make_t4_job: Callable[..., Job]) -> None:
    job = make_t4_job("cancel-me", 4)
    lifecycle.submit(job.pk)
    assert Job.objects.get(pk=job.pk).state == JobState.WAITING_FOR_QUOTA
    assert lifecycle.request_cancel(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    lifecycle.submit(job.pk)  # a late retry finds it cancelled and does nothing
    assert not job.current_attempt().vertex_name


def test_spot_draws_on_its_own_quota(make_t4_job: Callable[..., Job]) -> None:
    job = make_t4_job("spot-fits", 4, scheduling_strategy="SPOT")
    lifecycle.submit(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.current_attempt().vertex_name
    lifecycle.request_cancel(job.pk)
    lifecycle.send_cancel(job.pk)


def test_validate_shows_the_need_beside_the_quota_left(
        vertex: VertexBackend, client: Client, admin_user: Any) -> None:
    client.force_login(admin_user)
    body = client.post("/api/v1/jobs/validate/", t4_body("check", 4),
                       content_type="application/json").json()
    (row,) = body["quota"]["rows"]
    assert row["accelerator"] == "NVIDIA_TESLA_T4" and row["needed"] == 4
    assert row["scheduling"] == "on-demand" and row["quota"]["metric"] == T4
    assert (row["quota"]["limit"], row["quota"]["left"], row["quota"]["fits"]) == (2, 2, False)
    assert row["other_scheduling"] == "spot/flex-start"
    assert (row["other_quota"]["limit"], row["other_quota"]["fits"]) == (8, True)
    assert "will wait for quota" in body["quota"]["warning"]
    estimate = client.post("/api/v1/jobs/estimate/", {**t4_body("check", 1), "hours": 1},
                           content_type="application/json").json()
    assert estimate["quota"]["fits"] is True
    page = client.post("/jobs/validate/", form_data(
        workers_replica_count="0", chief_machine_type="n1-standard-8",
        chief_accelerator_type="NVIDIA_TESLA_T4", chief_accelerator_count="4")).content.decode()
    assert 'id="quota"' in page and "Quota in us-central1" in page
    assert 'id="quota-warning"' in page and "spot/flex-start: 8 left of 8" in page


def test_a_cpu_job_has_no_quota_section(vertex: VertexBackend, client: Client,
                                         admin_user: Any) -> None:
    client.force_login(admin_user)
    body = client.post("/api/v1/jobs/validate/", {
        "name": "cpu", "chief": {"machine_type": "n1-standard-4"}},
        content_type="application/json").json()
    assert body["quota"] is None
