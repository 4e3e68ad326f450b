"""The job list's filters and paging."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rest_framework.test import APIClient

from controlplane.runs.models import Job, JobState
from tests.security.conftest import World


def _names(api: APIClient, **params: Any) -> list[str]:
    response = api.get("/api/v1/jobs/", params)
    assert response.status_code == 200, response.content
    return sorted(j["name"] for j in response.json()["results"])


def test_filters_combine(world: World, make_job: Callable[..., Job],
                         token_client: Callable[[Any], APIClient]) -> None:
    member, admin = world.users["member"], world.users["admin"]
    t4 = make_job(world.team, member, name="t4")
    t4.request = {**t4.request, "chief": {"machine_type": "n1-standard-8",
                                          "accelerator_type": "NVIDIA_TESLA_T4",
                                          "accelerator_count": 1}}
    t4.created_at = datetime(2026, 3, 2, 12, tzinfo=UTC)
    t4.save()
    a100 = make_job(world.team, admin, name="a100", state=JobState.SUCCEEDED)
    a100.request = {**a100.request, "workers": {"accelerator_type": "NVIDIA_TESLA_A100"}}
    a100.created_at = datetime(2026, 3, 5, tzinfo=UTC)
    a100.save()
    make_job(world.other_team, world.users["outsider"], name="theirs")
    api = token_client(member)

    assert _names(api) == ["a100", "t4"]
    assert _names(api, state="succeeded") == ["a100"]
    assert _names(api, user="ann") == ["t4"]
    assert _names(api, accelerator="nvidia_tesla_t4") == ["t4"]
    assert _names(api, accelerator="NVIDIA_TESLA_A100") == ["a100"]
    assert _names(api, created_after="2026-03-03") == ["a100"]
    assert _names(api, created_before="2026-03-03") == ["t4"]
    assert _names(api, created_after="2026-03-02T12:00:00Z",
                  created_before="2026-03-02T12:00:01Z") == ["t4"]
    assert _names(api, team="vision", state="RUNNING", user="ann") == ["t4"]
    # Another team's slug is not a way in.
    assert _names(api, team="speech") == []


def test_bad_filter_values_name_the_parameter(world: World,
                                              token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["viewer"])
    bad_state = api.get("/api/v1/jobs/", {"state": "EXPLODED"})
    assert bad_state.status_code == 400 and "RUNNING" in bad_state.json()["state"][0]
    bad_date = api.get("/api/v1/jobs/", {"created_after": "last week"})
    assert bad_date.status_code == 400 and "created_after" in bad_date.json()


def test_paging(world: World, make_job: Callable[..., Job],
                token_client: Callable[[Any], APIClient]) -> None:
    for i in range(5):
        make_job(world.team, world.users["member"], name=f"j{i}")
    api = token_client(world.users["viewer"])
    first = api.get("/api/v1/jobs/", {"limit": 2}).json()
    assert first["count"] == 5 and len(first["results"]) == 2 and first["next"]
    rest = api.get("/api/v1/jobs/", {"limit": 2, "offset": 4}).json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    # Newest first: the pages do not overlap.
    seen = [j["id"] for j in first["results"]] + [
        j["id"] for j in api.get("/api/v1/jobs/", {"limit": 2, "offset": 2}).json()["results"]]
    assert len(set(seen)) == 4


def test_filter_values_the_database_cannot_hold_are_400s(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["viewer"])
    for name, value in [("created_after", "0001-01-01T00:00:00+23:59"),
                        ("created_before", "9999-12-31T23:59:59-23:59"),
                        ("user", "a\x00b"), ("accelerator", "\x00"), ("team", "\x00")]:
        response = api.get("/api/v1/jobs/", {name: value})
        assert response.status_code == 400, (name, response.content)
        assert name in response.json()
    # A far offset that PostgreSQL would refuse as it is, but is a moment in UTC: served.
    assert api.get("/api/v1/jobs/", {"created_after": "2026-01-01T00:00:00+23:00"}
                   ).status_code == 200


def test_paging_parameters_are_whole_numbers_given_once(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["viewer"])
    for query in ("limit=0", "limit=-1", "limit=abc", "limit=1_0", "offset=-1", "offset=1.5",
                  "offset=1&offset=2", "limit=" + "9" * 19):
        response = api.get("/api/v1/jobs/?" + query)
        assert response.status_code == 400, query
        assert set(response.json()) <= {"limit", "offset"}, query
    # More than the ceiling is served as the ceiling.
    assert api.get("/api/v1/jobs/?limit=5000").status_code == 200


def _pages_by_cursor(api: APIClient, **params: Any) -> list[list[int]]:
    pages: list[list[int]] = []
    response = api.get("/api/v1/jobs/", {"cursor": "", **params})
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        assert "count" not in body
        pages.append([j["id"] for j in body["results"]])
        if body["next"] is None:
            return pages
        response = api.get(body["next"])


def test_paging_by_cursor_walks_the_same_rows_without_a_count(
        world: World, make_job: Callable[..., Job],
        token_client: Callable[[Any], APIClient]) -> None:
    same_moment = datetime(2026, 3, 2, 12, tzinfo=UTC)
    for i in range(7):
        # Four of them made in the same microsecond: the id breaks the tie, none is lost.
        make_job(world.team, world.users["member"], name=f"j{i}",
                 state=JobState.FAILED if i % 2 else JobState.RUNNING,
                 **({"created_at": same_moment} if i < 4 else {}))
    theirs = make_job(world.other_team, world.users["outsider"], name="theirs",
                      created_at=same_moment)
    api = token_client(world.users["viewer"])

    by_offset = [j["id"] for j in api.get("/api/v1/jobs/", {"limit": 100}).json()["results"]]
    pages = _pages_by_cursor(api, limit=3)
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [pk for page in pages for pk in page] == by_offset
    assert theirs.pk not in by_offset
    # The filters travel in the next link.
    failed = [pk for page in _pages_by_cursor(api, limit=2, state="FAILED") for pk in page]
    assert failed == [j["id"] for j in api.get("/api/v1/jobs/", {"state": "FAILED"}
                                               ).json()["results"]]
    assert len(failed) == 3


def test_a_cursor_is_only_a_position_in_the_callers_own_jobs(
        world: World, make_job: Callable[..., Job],
        token_client: Callable[[Any], APIClient]) -> None:
    ours = make_job(world.team, world.users["member"], name="ours",
                    created_at=datetime(2026, 3, 1, tzinfo=UTC))
    theirs = make_job(world.other_team, world.users["outsider"], name="theirs",
                      created_at=datetime(2026, 3, 1, tzinfo=UTC))
    api = token_client(world.users["viewer"])
    # A cursor written by hand just after the other team's job: still only this team's rows.
    forged = base64.urlsafe_b64encode(
        f"2026-03-02T00:00:00+00:00|{theirs.pk + 1}".encode()).decode()
    body = api.get("/api/v1/jobs/", {"cursor": forged}).json()
    assert [j["id"] for j in body["results"]] == [ours.pk]


def test_bad_cursors_are_400s_that_name_the_parameter(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["viewer"])
    naive = base64.urlsafe_b64encode(b"2026-03-02T00:00:00|5").decode()
    not_an_id = base64.urlsafe_b64encode(b"2026-03-02T00:00:00+00:00|x").decode()
    for query in ("cursor=%%%", "cursor=abc", f"cursor={naive}", f"cursor={not_an_id}",
                  "cursor=a&cursor=b"):
        response = api.get("/api/v1/jobs/?" + query)
        assert response.status_code == 400, query
        assert set(response.json()) == {"cursor"}, query
    both = api.get("/api/v1/jobs/?cursor=&offset=5")
    assert both.status_code == 400 and set(both.json()) == {"offset"}
