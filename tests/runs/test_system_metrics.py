"""A job's system metrics per replica (controlplane/runs/system_metrics.py) through
GET /api/v1/jobs/<id>/system/ and the job page's panel, with Cloud Monitoring's answer
scripted on the fake backend (tests/backends/test_contract.py reads the emulator's)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from controlplane.backends import errors
from controlplane.backends.base import ReplicaMetrics
from controlplane.runs import system_metrics
from controlplane.runs.models import Job, JobAttempt
from tests.fakes import FakeBackend

VERTEX_ID = "8123"


@pytest.fixture
def api(client: Client, admin_user: Any) -> Client:
    client.force_login(admin_user)
    return client


@pytest.fixture
def running(make_job: Callable[..., Job], backend: FakeBackend) -> Job:
    job = make_job()
    JobAttempt.objects.filter(job=job, number=job.attempt).update(vertex_job_id=VERTEX_ID)
    now = timezone.now()
    backend.system_metrics[VERTEX_ID] = [
        ReplicaMetrics("workerpool0-0",
                       cpu=[(now - timedelta(minutes=2), 0.25), (now - timedelta(minutes=1), 0.5)],
                       memory=[(now - timedelta(minutes=1), 0.1)],
                       memory_bytes=[(now - timedelta(minutes=1), 2.5e9)],
                       accelerator=[(now - timedelta(minutes=1), 0.9)],
                       accelerator_memory=[(now - timedelta(minutes=1), 0.4)]),
        # Sampled before the default window only.
        ReplicaMetrics("workerpool1-0", cpu=[(now - timedelta(hours=2), 0.1)]),
    ]
    return job


def test_each_replicas_latest_figures_and_history(api: Client, running: Job) -> None:
    body = api.get(f"/api/v1/jobs/{running.pk}/system/").json()
    assert (body["job"], body["vertex_job_id"], body["minutes"]) == (running.pk, VERTEX_ID, 30)
    first, second = body["replicas"]
    assert first["replica"] == "workerpool0-0"
    latest = {k: v for k, v in first["latest"].items() if k != "at"}
    assert latest == {"cpu_percent": 50.0, "memory_percent": 10.0, "memory_gb": 2.5,
                      "accelerator_percent": 90.0, "accelerator_memory_percent": 40.0}
    # The older CPU sample is a row of its own, the figures not sampled then null.
    assert [row["cpu_percent"] for row in first["history"]] == [25.0, 50.0]
    assert first["history"][0]["memory_gb"] is None
    assert (second["replica"], second["history"], second["latest"]["cpu_percent"]) == (
        "workerpool1-0", [], None)
    # A wider window reaches the older sample.
    wide = api.get(f"/api/v1/jobs/{running.pk}/system/?minutes=180").json()
    assert wide["replicas"][1]["latest"]["cpu_percent"] == 10.0


@pytest.mark.parametrize("minutes", ["0", "1441", "ten", "٣", "9" * 5000])
def test_a_bad_window_is_a_400_naming_minutes(api: Client, running: Job, minutes: str) -> None:
    answer = api.get(f"/api/v1/jobs/{running.pk}/system/", {"minutes": minutes})
    assert answer.status_code == 400 and "minutes" in answer.json()


def test_another_teams_job_is_not_found(client: Client, running: Job) -> None:
    client.force_login(get_user_model().objects.create_user(username="outsider"))
    assert client.get(f"/api/v1/jobs/{running.pk}/system/").status_code == 404
    assert client.get(f"/jobs/{running.pk}/partials/system/").status_code == 404


def test_unreadable_monitoring_is_a_503_and_no_vertex_job_a_note(
        api: Client, running: Job, make_job: Callable[..., Job], backend: FakeBackend) -> None:
    backend.system_metrics[VERTEX_ID] = errors.PermissionDenied("no credentials")
    answer = api.get(f"/api/v1/jobs/{running.pk}/system/")
    assert answer.status_code == 503 and "no credentials" in answer.json()["detail"]
    unsubmitted = api.get(f"/api/v1/jobs/{make_job('later').pk}/system/").json()
    assert unsubmitted["replicas"] == [] and "no CustomJob" in unsubmitted["note"]


def test_the_page_defers_the_panel_and_the_panel_draws_each_replica(
        api: Client, running: Job, backend: FakeBackend) -> None:
    scripted = backend.system_metrics[VERTEX_ID]
    # The page does not read Cloud Monitoring (it would fail here): the panel's own request does.
    backend.system_metrics[VERTEX_ID] = errors.TransientBackendError("UNAVAILABLE")
    page = api.get(f"/jobs/{running.pk}/")
    assert page.status_code == 200
    assert 'id="job-system"' in page.content.decode()
    assert 'hx-trigger="load"' in page.content.decode()
    assert "Cloud Monitoring could not be read" not in page.content.decode()
    backend.system_metrics[VERTEX_ID] = scripted
    panel = api.get(f"/jobs/{running.pk}/partials/system/").content.decode()
    assert "workerpool0-0" in panel and "50.0%" in panel and "2.50 GB (10.0%)" in panel
    assert "90.0%, memory 40.0%" in panel and "<polyline" in panel
    backend.system_metrics[VERTEX_ID] = errors.TransientBackendError("UNAVAILABLE")
    failed = api.get(f"/jobs/{running.pk}/partials/system/").content.decode()
    assert "Cloud Monitoring could not be read" in failed


def test_a_long_history_is_thinned_keeping_the_last_sample() -> None:
    rows = list(range(1000))
    kept = system_metrics.thin(rows, 120)
    assert len(kept) == 120 and kept[0] == 0 and kept[-1] == 999
    assert kept == sorted(kept)
    assert system_metrics.thin(rows[:5], 120) == rows[:5]
