"""core.db_times: the times the ORM reads are parsed by psycopg's C loader, and come out as
Django's own loader gives them (the same instant, the same time zone object), for every kind
of value PostgreSQL writes, the ones Python cannot hold refused alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.pq import Format

from controlplane.core import db_times
from controlplane.runs.models import JobEvent

LITERALS = ["2026-12-01 10:00:00+00", "2026-12-01 10:00:00.000001+00",
            "2026-12-01 23:59:59.999999-11:30", "2026-06-30 12:00:00+05:45",
            "0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00",
            "2024-02-29 00:00:00+14", "1970-01-01 00:00:00+00", "1969-12-31 23:59:59.5+00"]
OUT_OF_RANGE = ["infinity", "-infinity", "0044-03-15 00:00:00+00 BC"]


def _read(literal: str, *, django_loader: bool) -> datetime | type[Exception]:
    raw = connection.connection
    with raw.cursor() as cursor:
        if django_loader:
            register_tzloader(connection.timezone, cursor)
        try:
            cursor.execute("SELECT %s::timestamptz", [literal], prepare=False)
            return cursor.fetchone()[0]
        except (psycopg.DataError, ValueError, OverflowError) as exc:
            # Refused by the loader, in Python: PostgreSQL sent the value, the transaction
            # goes on.
            return type(exc)


@pytest.mark.django_db
def test_the_connections_loader_parses_in_c() -> None:
    connection.ensure_connection()
    loader = connection.connection.adapters.get_loader(
        psycopg.adapters.types["timestamptz"].oid, Format.TEXT)
    # Django's cursors read text, which it is registered for.
    assert loader.__name__ == "CTimestamptzLoader" and loader.timezone is connection.timezone


@pytest.mark.django_db
@pytest.mark.parametrize("literal", LITERALS + OUT_OF_RANGE)
def test_every_value_reads_as_djangos_loader_reads_it(literal: str) -> None:
    ours, djangos = _read(literal, django_loader=False), _read(literal, django_loader=True)
    assert ours == djangos
    if isinstance(ours, datetime):
        assert ours.tzinfo is djangos.tzinfo is connection.timezone
    else:
        assert literal in OUT_OF_RANGE


@pytest.mark.django_db
def test_the_orm_reads_back_the_instant_it_wrote(job_for_times) -> None:
    at = datetime(2026, 12, 1, 10, 11, 12, 131415, tzinfo=UTC) - timedelta(hours=30)
    event = JobEvent.objects.create(job=job_for_times, kind="state", timestamp=at)
    assert JobEvent.objects.get(pk=event.pk).timestamp == at
    assert JobEvent.objects.filter(timestamp__lt=at + timedelta(microseconds=1)).count() == 1


def test_without_the_c_module_nothing_is_registered(monkeypatch) -> None:
    monkeypatch.setattr(db_times, "_CTimestamptzLoader", None)
    db_times.loader_for.cache_clear()
    try:
        assert db_times.loader_for(UTC) is None
    finally:
        db_times.loader_for.cache_clear()


@pytest.fixture
def job_for_times(team):
    from django.contrib.auth import get_user_model

    from controlplane.runs.models import Job

    user = get_user_model().objects.create(username="times")
    return Job.objects.create(team=team, created_by=user, name="t", request={}, custom_job={})
