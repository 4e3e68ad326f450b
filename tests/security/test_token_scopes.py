"""Narrowed tokens: to some of the user's teams, and to reading only. A narrowed token sees
nothing outside its teams (404, as another team's objects), does nothing but read when it is
read-only, and cannot make or revoke a token wider than itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.security import tokens
from controlplane.security.models import ApiToken
from controlplane.teams.models import Membership, Role
from tests.security.conftest import World

BODY = {"name": "exp", "chief": {"machine_type": "n1-standard-4"}, "args": ["--preset", "tiny"]}


@pytest.fixture
def ann_in_two_teams(world: World) -> Any:
    """ann is a member of vision and of speech."""
    ann = world.users["member"]
    Membership.objects.create(user=ann, team=world.other_team, role=Role.MEMBER)
    return ann


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def quiet(django_capture_on_commit_callbacks: Any) -> Any:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        yield callbacks


def test_a_token_for_one_team_sees_and_acts_only_there(
        world: World, ann_in_two_teams: Any, make_job: Callable[..., Job], backend: Any,
        quiet: Any) -> None:
    mine = make_job(world.team, ann_in_two_teams, name="vision-job")
    theirs = make_job(world.other_team, ann_in_two_teams, name="speech-job")
    api = _client(tokens.create(ann_in_two_teams, "vision only", team_slugs=["vision"]).key)
    listed = api.get("/api/v1/jobs/").json()["results"]
    assert [j["name"] for j in listed] == ["vision-job"]
    assert api.get(f"/api/v1/jobs/{theirs.pk}/").status_code == 404
    assert api.post(f"/api/v1/jobs/{theirs.pk}/cancel/").status_code == 404
    assert [t["slug"] for t in api.get("/api/v1/teams/").json()["results"]] == ["vision"]
    refused = api.post("/api/v1/jobs/", {**BODY, "team": "speech"}, format="json")
    assert refused.status_code == 400
    assert "this token is not for team 'speech'" in refused.json()["team"][0]
    made = api.post("/api/v1/jobs/", BODY, format="json")  # its only team: vision
    assert made.status_code == 201, made.content
    assert Job.objects.get(pk=made.json()["id"]).team == world.team
    assert api.post(f"/api/v1/jobs/{mine.pk}/cancel/").status_code in (200, 202)
    # The same user's session still sees both teams.
    session = Client()
    session.force_login(ann_in_two_teams)
    assert {j["name"] for j in session.get("/api/v1/jobs/").json()["results"]} >= {
        "vision-job", "speech-job"}


def test_a_read_only_token_reads_and_does_nothing_else(
        world: World, make_job: Callable[..., Job], backend: Any, quiet: Any) -> None:
    admin = world.users["admin"]
    job = make_job(world.team, admin)
    api = _client(tokens.create(admin, "dashboard", read_only=True).key)
    assert api.get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert api.get("/api/v1/teams/").json()["results"][0]["role"] == "viewer"
    assert api.post("/api/v1/jobs/", {**BODY, "team": "vision"}, format="json"
                    ).status_code == 403
    assert api.post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 403
    assert api.put("/api/v1/teams/vision/budget/", {"monthly_budget_micros": 1},
                   format="json").status_code == 403
    assert api.post("/api/v1/teams/vision/members/", {"username": "oscar", "role": "admin"},
                    format="json").status_code == 403
    assert api.get("/api/v1/teams/vision/audit/").status_code == 403
    job.refresh_from_db()
    assert job.state == "RUNNING"


def test_a_token_never_makes_or_revokes_a_wider_one(
        world: World, ann_in_two_teams: Any) -> None:
    whole = tokens.create(ann_in_two_teams, "whole").token
    narrow = _client(tokens.create(ann_in_two_teams, "vision only", team_slugs=["vision"]).key)
    wider = narrow.post("/api/v1/tokens/", {"name": "x", "teams": ["speech"]}, format="json")
    assert wider.status_code == 400 and "not teams of yours: speech" in wider.json()["teams"][0]
    same = narrow.post("/api/v1/tokens/", {"name": "y"}, format="json")
    assert same.status_code == 201 and same.json()["teams"] == ["vision"]
    assert narrow.delete(f"/api/v1/tokens/{whole.pk}/").status_code == 403
    assert narrow.delete(f"/api/v1/tokens/{same.json()['id']}/").status_code == 200

    reader = _client(tokens.create(ann_in_two_teams, "reader", read_only=True).key)
    escalate = reader.post("/api/v1/tokens/", {"name": "z"}, format="json")
    assert escalate.status_code == 400 and "read-only" in escalate.json()["read_only"][0]
    assert reader.post("/api/v1/tokens/", {"name": "z", "read_only": True}, format="json"
                       ).status_code == 201
    assert reader.delete(f"/api/v1/tokens/{whole.pk}/").status_code == 403
    whole.refresh_from_db()
    assert whole.active
    assert not ApiToken.objects.filter(name="x").exists()


def test_a_token_for_a_team_that_is_not_yours_is_refused(world: World) -> None:
    with pytest.raises(tokens.ScopeError, match="not teams of yours: speech"):
        tokens.create(world.users["member"], "t", team_slugs=["speech"])
    assert not ApiToken.objects.exists()


def test_the_page_makes_a_narrowed_token(world: World, ann_in_two_teams: Any) -> None:
    client = Client()
    client.force_login(ann_in_two_teams)
    page = client.post("/tokens/", {"name": "ci", "teams": ["speech"], "read_only": "on"})
    assert page.status_code == 200
    token = ApiToken.objects.get(name="ci")
    assert token.team_slugs == ["speech"] and token.read_only
    assert "speech · read only" in page.content.decode()
    bad = client.post("/tokens/", {"name": "bad", "teams": ["nope"]})
    assert bad.status_code == 400 and "not teams of yours: nope" in bad.content.decode()
