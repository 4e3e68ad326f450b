"""Fixtures for the cluster unit tests: queued tasks recorded instead of sent, and people of a
team and of another team."""

from __future__ import annotations

from typing import Any

import pytest

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
