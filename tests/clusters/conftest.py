"""Fixtures for the cluster unit tests: queued tasks recorded instead of sent, Ray's Job API as
a script, and people of a team and of another team."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.backends.clusters_base import RayJobStatus
from controlplane.clusters import lifecycle
from controlplane.teams.models import Role, Team
from tests.people import make_user


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple]]:
    """Tasks queued by name (name, args), in order; nothing reaches a broker."""
    sent: list[tuple[str, tuple]] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda name, *args, **kw: sent.append((name, args)))
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


class FakeRay:
    """Ray's Job Submission API as the lifecycle asks it: a scripted status and output."""

    def __init__(self) -> None:
        self.status = "RUNNING"
        self.output = ""
        self.submitted: list[dict[str, Any]] = []

    def submit_ray_job(self, dashboard, submission_id, entrypoint, runtime_env, metadata,
                       entrypoint_num_cpus=None) -> str:
        self.submitted.append({"id": submission_id, "env": runtime_env["env_vars"]})
        return submission_id

    def stop_ray_job(self, dashboard, submission_id) -> None:
        self.status = "STOPPED"

    def ray_job(self, dashboard, submission_id) -> RayJobStatus:
        return RayJobStatus(submission_id, self.status, "")

    def ray_job_logs(self, dashboard, submission_id) -> str:
        return self.output


@pytest.fixture
def ray(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    fake = FakeRay()
    monkeypatch.setattr(lifecycle, "get_cluster_backend", lambda: fake)
    return fake
