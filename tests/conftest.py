"""Shared fixtures. With CI=true, a test that would skip for want of a service fails instead."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the models load once Django is set up, after this module
    from controlplane.teams.models import Team

CI = os.environ.get("CI", "").lower() == "true"

# The stacks and their fixtures, defined once for every directory (tests/stacks.py); where
# Hypothesis finds the project's own modules (tests/hypothesis_locals.py).
pytest_plugins = ["tests.stacks", "tests.scheduling", "tests.cpu_report",
                  "tests.hypothesis_locals"]


def require(condition: bool, why: str) -> None:
    if condition:
        return
    if CI:
        pytest.fail(f"{why} (CI=true: the service is required)", pytrace=False)
    pytest.skip(why)


# Fixtures that start processes beyond the test's own: a test that asks for one is marked, so
# `make test-fast` (-m "not stack and not browser and not environment") leaves it out. By the
# fixtures a test needs, its fixtures' own included: the stacks' `api` needs `stack`, and a
# module's own fixture named `api` (a Django test client) is no stack.
STACKS = {"stack", "survival_stack", "serving_stack", "chaos_stack"}
BUILT_ENVIRONMENTS = {"xla_python"}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Marks each test by what it starts, as it is collected: before -m deselects."""
    names = set(getattr(item, "fixturenames", ()))
    if names & STACKS:
        item.add_marker(pytest.mark.stack)
    if "browser" in names:
        item.add_marker(pytest.mark.browser)
    if names & BUILT_ENVIRONMENTS:
        item.add_marker(pytest.mark.environment)


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
def django_db_setup(request: pytest.FixtureRequest, django_test_environment: None,
                    django_db_blocker: Any, django_db_modify_db_settings: None,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """pytest-django's test database, on PostgreSQL a copy of the run's migrated template
    (tests/stacks.py) made as Django's create_test_db would name and install it; elsewhere
    Django's own setup, as pytest-django does it."""
    from django.conf import settings
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    url = os.environ.get("DATABASE_URL", "")
    connection = connections["default"]
    if not url.startswith(("postgres://", "postgresql://")) or len(settings.DATABASES) != 1:
        with django_db_blocker.unblock():
            databases = setup_databases(verbosity=0, interactive=False, keepdb=False)
        yield
        with django_db_blocker.unblock():
            teardown_databases(databases, verbosity=0)
        return
    from tests.stacks import copy_of_the_template, drop_database

    original = connection.settings_dict["NAME"]
    name = connection.creation._get_test_db_name()
    broker = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    with django_db_blocker.unblock():
        connection.close()
        copy_of_the_template(url, broker, tmp_path_factory, name)
        settings.DATABASES["default"]["NAME"] = name
        connection.settings_dict["NAME"] = name
    yield
    with django_db_blocker.unblock():
        connection.close()
        settings.DATABASES["default"]["NAME"] = original
        connection.settings_dict["NAME"] = original
        drop_database(url, name)


@pytest.fixture(scope="session")
def redis_url() -> str:
    from config.devstack import redis_answers

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    require(redis_answers(url, timeout_s=2), f"Redis at {url} does not answer")
    return url


@pytest.fixture(autouse=True)
def _no_live_push(request: pytest.FixtureRequest) -> None:
    """The job page's live push (Redis pub/sub, controlplane/logs/live.py) is off unless a
    test turns it on (tests/logs/test_stream.py sets CP_LIVE_URL): tests that count what a
    transaction leaves for its commit count the work they are about, and publish nothing."""
    from django.conf import settings

    if settings.configured:
        request.getfixturevalue("settings").CP_LIVE_URL = ""


@pytest.fixture(autouse=True)
def _fresh_rate_limits(request: pytest.FixtureRequest) -> None:
    """Each test starts with empty rate-limit counters, so requests made by earlier tests
    never throttle a later one. The API's live in the database (security.RateWindow: each
    test's transaction or flush removes them); the login lockout's in the default cache, a
    database table unless CP_CACHE_URL names Redis: cleared once the test has its database,
    and not at all for a test without one (it can count nothing)."""
    from django.conf import settings

    if not settings.configured:
        return
    names = request.fixturenames
    if "transactional_db" in names or "live_server" in names:
        request.getfixturevalue("transactional_db")
    elif "db" in names or request.node.get_closest_marker("django_db"):
        request.getfixturevalue("db")
    elif settings.CACHES["default"]["BACKEND"].endswith("DatabaseCache"):
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


@pytest.fixture
def checkpoint_storage(settings: Any, tmp_path_factory: Any) -> Callable[[str], str]:
    """Buckets as local folders (as the emulator keeps them): returns a function that writes a
    committed checkpoint at a gs:// step folder, so a resubmission finds it on storage."""
    root = tmp_path_factory.mktemp("gcs")
    settings.CP_LOCAL_GCS_ROOT = str(root)

    def commit(uri: str) -> str:
        bucket, _, key = uri.removeprefix("gs://").partition("/")
        folder = root / bucket / key
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "COMMITTED").write_text('{"step": 0}')
        return uri

    return commit
