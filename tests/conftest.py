"""Shared fixtures. With CI=true, a test that would skip for want of a service fails instead."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the models load once Django is set up, after this module
    from controlplane.teams.models import Team

CI = os.environ.get("CI", "").lower() == "true"


def require(condition: bool, why: str) -> None:
    if condition:
        return
    if CI:
        pytest.fail(f"{why} (CI=true: the service is required)", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    require(url.startswith(("postgres://", "postgresql://")),
            f"DATABASE_URL is not PostgreSQL ({url or 'unset'}); `make test` sets it")
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("select 1")
    except Exception as exc:  # any failure: no usable PostgreSQL
        require(False, f"PostgreSQL at {url} does not answer: {exc}")
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    from config.devstack import redis_answers

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    require(redis_answers(url, timeout_s=2), f"Redis at {url} does not answer")
    return url


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """Each test starts with empty API rate-limit counters (they live in the default cache),
    so requests made by earlier tests in the same process never throttle a later one."""
    from django.conf import settings

    if not settings.configured:
        return
    from django.core.cache import cache

    cache.clear()


# --- fixtures every kind of test uses ----------------------------------------------------------

@pytest.fixture
def backend(settings: Any) -> Iterator[Any]:
    """The scripted Vertex backend (tests/fakes.py) in place of Google's."""
    from controlplane.backends import base

    settings.CP_BACKEND = "tests.fakes.FakeBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


@pytest.fixture
def team(db: None) -> Team:
    from controlplane.teams.models import Team

    return Team.objects.create(name="Vision", slug="vision")


@pytest.fixture
def other_team(db: None) -> Team:
    from controlplane.teams.models import Team

    return Team.objects.create(name="Speech", slug="speech")
