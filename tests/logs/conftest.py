"""Fixtures for the log tests: the real emulator over gRPC, the real VertexBackend (Google's
GAPIC clients) pointed at it, and jobs with attempts in the database."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from controlplane.backends import base
from controlplane.backends.training import VertexBackend
from controlplane.runs.models import Job, JobAttempt, JobState
from controlplane.teams.models import Role, Team
from tests.localvertex.helpers import FAST_FLAGS, PROJECT, EmulatorProcess
from tests.people import make_user
from tests.runs.conftest import admin_user, make_job  # noqa: F401 - the restart tests make jobs
from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST

_vertex_ids = itertools.count(7_000_000_000_000_000_001)


@pytest.fixture(scope="session")
def log_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    """One emulator for the log tests, with no read quota (the quota tests start their own);
    the tests write jobs' entries as Vertex's log agent would, so it accepts them."""
    emu = EmulatorProcess(tmp_path_factory.mktemp("logs") / "data",
                          [*FAST_FLAGS, "--logging-quota-per-minute", "0",
                           "--accept-job-log-writes"])
    emu.start()
    yield emu
    emu.stop()


def use_emulator(settings: Any, emu: EmulatorProcess) -> VertexBackend:
    settings.VERTEX_EMULATOR_ADDR = emu.address
    settings.VERTEX_EMULATOR_TOKEN = emu.token
    settings.VERTEX_PROJECT = PROJECT
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    base.get_backend.cache_clear()
    backend = base.get_backend()
    assert isinstance(backend, VertexBackend)
    return backend


@pytest.fixture
def vertex(settings: Any, log_emulator: EmulatorProcess, postgres_url: str,
           db: None) -> Iterator[VertexBackend]:
    """The real backend on the shared emulator, and PostgreSQL (required: the storage under
    test is PostgreSQL's)."""
    yield use_emulator(settings, log_emulator)
    base.get_backend.cache_clear()


@pytest.fixture
def committed_vertex(settings: Any, log_emulator: EmulatorProcess, postgres_url: str,
                     transactional_db: None) -> Iterator[VertexBackend]:
    """As `vertex`, with every page committed as in production: PostgreSQL checks foreign keys
    at each commit, not 100,000 of them at once when a test's transaction ends."""
    yield use_emulator(settings, log_emulator)
    base.get_backend.cache_clear()


@pytest.fixture
def user(db: None) -> Any:
    return get_user_model().objects.create_user(username="ann")


AttemptFactory = Callable[..., JobAttempt]


@pytest.fixture
def make_attempt(team: Team, user: Any) -> AttemptFactory:
    """A job with one submitted attempt whose CustomJob id is new to the emulator."""

    def make(created_at: datetime, *, name: str = "exp", ended_at: datetime | None = None,
             vertex_job_id: str | None = None, job: Job | None = None) -> JobAttempt:
        if job is None:
            job = Job.objects.create(team=team, created_by=user, name=name, request={},
                                     custom_job={}, project=PROJECT, region="us-central1",
                                     state=JobState.RUNNING, created_at=created_at)
        number = job.attempts.count() + 1
        return JobAttempt.objects.create(
            job=job, number=number, display_name=f"cp-{job.pk}-a{number}",
            vertex_job_id=vertex_job_id or str(next(_vertex_ids)), created_at=created_at,
            submitted_at=created_at, ended_at=ended_at)

    return make


# The CustomJob id of followed_job()'s attempt: the job id its log entries carry.
FOLLOWED_ID = "42"


def followed_job(custom_job: dict[str, Any] | None = None) -> Job:
    """A running job of team Vision, submitted by its member ann, whose one attempt is
    CustomJob FOLLOWED_ID: what the follower stores entries for."""
    team = Team.objects.create(name="Vision", slug="vision")
    member = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=member, name="exp", request=CPU_REQUEST,
                             custom_job=CPU_CUSTOM_JOB if custom_job is None else custom_job,
                             project="p", region="us-central1", state=JobState.RUNNING)
    JobAttempt.objects.create(job=job, number=1, display_name="cp-1-a1",
                              vertex_job_id=FOLLOWED_ID)
    return job


@pytest.fixture
def running_job(make_job: Callable[..., Job]) -> Job:  # noqa: F811 - the fixture imported above
    """A spot job whose first attempt runs on Vertex since an hour ago (the restart tests)."""
    job = make_job(spot=True)
    JobAttempt.objects.filter(job=job).update(
        vertex_name="projects/p/locations/l/customJobs/1", vertex_state="JOB_STATE_RUNNING",
        started_at=timezone.now() - timedelta(hours=1), scheduling="SPOT")
    return job
