"""Fixtures for the serving unit tests: a fake Vertex, Celery sends recorded instead of queued,
and a team with a trained job."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from controlplane.backends import images_base, serving_base
from controlplane.notifications import tasks as notification_tasks
from controlplane.runs.models import Job, JobState
from controlplane.serving import tasks
from controlplane.teams.models import Role, Team
from tests.people import make_user
from tests.serving.fakes import FakeServing


@pytest.fixture
def fake(settings: Any) -> Iterator[FakeServing]:
    settings.CP_SERVING_BACKEND = "tests.serving.fakes.FakeServing"
    settings.CP_IMAGE_REGISTRY = "tests.serving.fakes.FakeImages"
    serving_base.get_serving_backend.cache_clear()
    images_base.get_image_registry.cache_clear()
    yield serving_base.get_serving_backend()
    serving_base.get_serving_backend.cache_clear()
    images_base.get_image_registry.cache_clear()


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple]]:
    """Tasks sent (name, args), in order; nothing reaches a broker."""
    sent: list[tuple[str, tuple]] = []
    for name in ("upload_model", "package_model", "create_endpoint", "delete_endpoint",
                 "deploy", "undeploy", "mutate", "probe_endpoint", "send_notification"):
        task = getattr(notification_tasks if name == "send_notification" else tasks, name)
        monkeypatch.setattr(task, "delay",
                            lambda *args, _n=name: sent.append((_n, args)))
        monkeypatch.setattr(task, "apply_async",
                            lambda args=(), _n=name, **kw: sent.append((_n, tuple(args))))
    return sent


@pytest.fixture
def member(team: Team) -> Any:
    return make_user("ann", team, Role.MEMBER)


@pytest.fixture
def viewer(team: Team) -> Any:
    return make_user("vic", team, Role.VIEWER)


@pytest.fixture
def outsider(db: None) -> Any:
    other = Team.objects.create(name="Speech", slug="speech")
    return make_user("oscar", other, Role.ADMIN)


@pytest.fixture
def trained_job(team: Team, member: Any) -> Job:
    """A finished ddp job that reported checkpoints at steps 30 and 60 (local paths, as the
    emulator's AIP_CHECKPOINT_DIR gives them)."""
    job = Job.objects.create(
        team=team, created_by=member, name="gpt", request={"name": "gpt", "strategy": "ddp"},
        custom_job={}, project="p", region="us-central1", state=JobState.SUCCEEDED)
    for step in (30, 60):
        job.events.create(kind="checkpoint_saved", step=step, timestamp=timezone.now(),
                          data={"step": step, "path": f"/var/x/gcs/cp-local-bucket/jobs/vision/"
                                                      f"job-{job.pk}/checkpoints/step-{step:08d}"})
    return job
