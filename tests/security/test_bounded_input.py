"""Bounded parsing: bodies, numbers and dates a hostile client sends are a 400 naming the
field (or the body), never a server error, and nothing is created."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from tests.runs.pages.conftest import CPU_REQUEST
from tests.security.conftest import World

# Each nesting level repeats the one below ten times: 460 bytes that would expand to megabytes.
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(6))


@pytest.fixture
def member(world: World, token_client: Callable[[Any], APIClient]) -> APIClient:
    return token_client(world.users["member"])


def test_yaml_aliases_are_refused_whatever_the_role(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    for role in ("viewer", "member", "admin"):
        answer = token_client(world.users[role]).post(
            "/api/v1/jobs/import/", ALIAS_BOMB, content_type="application/yaml")
        assert answer.status_code == 400, answer.content[:200]
        assert len(answer.content) < 2000
        assert "aliases" in json.dumps(answer.json())


@pytest.mark.parametrize("path, field", [
    ("/api/v1/jobs/?created_after=2026-02-31", "created_after"),
    ("/api/v1/jobs/?created_before=2026-13-01T00:00:00Z", "created_before"),
    ("/api/v1/jobs/?created_after=0001-01-01T00:00:00%2B23:59", "created_after"),
    ("/api/v1/jobs/?created_after=9999-12-31T23:59:59-23:59", "created_after"),
    ("/api/v1/teams/vision/audit/?since=2026-02-30T00:00:00Z", "since"),
    ("/api/v1/teams/vision/audit/?until=99999-01-01", "until"),
    ("/api/v1/serving/models/?job=99999999999999999999999999", "job"),
    ("/api/v1/serving/models/?job=%C2%B2", "job"),
])
def test_impossible_dates_and_numbers_in_queries(
        world: World, token_client: Callable[[Any], APIClient], path: str, field: str) -> None:
    answer = token_client(world.users["admin"]).get(path)
    assert answer.status_code == 400, answer.content[:300]
    assert field in answer.json()


def test_log_query_bounds(world: World, token_client: Callable[[Any], APIClient],
                          make_job: Callable[..., Job]) -> None:
    job = make_job(world.team, world.users["member"])
    api = token_client(world.users["viewer"])
    for query, field in (("after=2026-02-31T00:00:00Z,abc", "after"),
                         ("attempt=999999999999999999999", "attempt"),
                         ("severity=99999999999999999999", "severity")):
        answer = api.get(f"/api/v1/jobs/{job.pk}/logs/?{query}")
        assert answer.status_code == 400, (query, answer.content[:300])
        assert field in answer.json()
    answer = api.get(f"/api/v1/jobs/{job.pk}/metrics/?attempt=99999999999999999999999")
    assert answer.status_code == 400
    assert "attempt" in answer.json()


def test_huge_numbers_in_a_job_are_field_errors(world: World, member: APIClient) -> None:
    body = {**CPU_REQUEST, "team": "vision", "scheduling_strategy": "FLEX_START",
            "max_wait_hours": 1e308}
    answer = member.post("/api/v1/jobs/", body, format="json")
    assert answer.status_code == 400
    assert "max_wait_hours" in answer.json()
    raw = json.dumps({**CPU_REQUEST, "team": "vision"})[:-1] + ', "job_spec_extra": {"x": 1e400}}'
    answer = member.post("/api/v1/jobs/", raw, content_type="application/json")
    assert answer.status_code == 400
    assert "too large" in answer.json()["detail"]
    raw = json.dumps({**CPU_REQUEST, "team": "vision"})[:-1] + ', "timeout_hours": NaN}'
    assert member.post("/api/v1/jobs/validate/", raw,
                       content_type="application/json").status_code == 400
    assert not Job.objects.exists()


def test_deep_and_large_bodies(settings: Any, world: World, member: APIClient) -> None:
    deep = '{"job_spec_extra": ' + "[" * 400 + "]" * 400 + "}"
    for path in ("/api/v1/jobs/", "/api/v1/jobs/validate/", "/api/v1/jobs/import/"):
        answer = member.post(path, deep, content_type="application/json")
        assert answer.status_code == 400, (path, answer.content[:200])
        assert "deeper" in answer.json()["detail"]
    deep_yaml = "a: " + "[" * 400 + "]" * 400
    answer = member.post("/api/v1/jobs/import/", deep_yaml, content_type="application/yaml")
    assert answer.status_code == 400
    settings.CP_MAX_BODY_BYTES = 10_000
    big = json.dumps({**CPU_REQUEST, "team": "vision", "env": {"PAD": "x" * 20_000}})
    answer = member.post("/api/v1/jobs/", big, content_type="application/json")
    assert answer.status_code == 400
    assert "larger than 10000 bytes" in answer.json()["detail"]
    assert not Job.objects.exists()
