"""A narrowed token never widens: its scope is stored, it stops working when its teams are
gone, and a token it makes never outlives or outranks it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.security import tokens
from controlplane.security.models import ApiToken
from controlplane.teams.models import Membership, Role
from tests.security.conftest import World


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def ann(world: World) -> Any:
    ann = world.users["member"]
    Membership.objects.create(user=ann, team=world.other_team, role=Role.MEMBER)
    return ann


def test_a_token_for_a_team_the_user_left_mints_nothing(world: World, ann: Any) -> None:
    api = _client(tokens.create(ann, "speech only", team_slugs=["speech"]).key)
    Membership.objects.filter(user=ann, team=world.other_team).delete()
    answer = api.post("/api/v1/tokens/", {"name": "child"}, format="json")
    assert answer.status_code == 400
    assert "teams" in answer.json()
    assert ApiToken.objects.filter(user=ann).count() == 1
    # ...and it sees nothing of the team it still could through a session.
    assert api.get("/api/v1/jobs/").json()["results"] == []
    assert [t["slug"] for t in api.get("/api/v1/teams/").json()["results"]] == []


def test_deleting_a_tokens_only_team_does_not_make_it_an_all_teams_token(
        world: World, ann: Any) -> None:
    key = tokens.create(ann, "speech only", team_slugs=["speech"]).key
    assert _client(key).get("/api/v1/teams/").status_code == 200
    world.other_team.delete()
    token = ApiToken.objects.get(prefix=key[:tokens.PREFIX_LENGTH])
    assert not token.all_teams and token.team_slugs == []
    answer = _client(key).get("/api/v1/teams/")
    assert answer.status_code == 401
    assert "no longer exist" in answer.json()["detail"]


def test_all_teams_is_explicit(world: World, ann: Any) -> None:
    everything = tokens.create(ann, "all").token
    assert everything.all_teams
    api = _client(tokens.create(ann, "all", team_slugs=[]).key)
    assert {t["slug"] for t in api.get("/api/v1/teams/").json()["results"]} == {
        "vision", "speech"}
    assert api.get("/api/v1/tokens/").json()["results"][0]["all_teams"] is True


def test_a_child_never_outlives_its_parent(world: World, ann: Any) -> None:
    soon = timezone.now() + timedelta(hours=1)
    api = _client(tokens.create(ann, "hour", expires_at=soon).key)
    child = api.post("/api/v1/tokens/", {"name": "child"}, format="json")
    assert child.status_code == 201, child.content
    made = ApiToken.objects.get(pk=child.json()["id"])
    assert made.expires_at == soon
    later = (soon + timedelta(days=30)).isoformat()
    refused = api.post("/api/v1/tokens/", {"name": "c2", "expires_at": later}, format="json")
    assert refused.status_code == 400
    assert "outlive" in refused.json()["expires_at"][0]
    # The child of a child is bound by the first parent too.
    grandchild = _client(child.json()["key"]).post(
        "/api/v1/tokens/", {"name": "g", "expires_at": later}, format="json")
    assert grandchild.status_code == 400


def test_a_child_never_outranks_its_parent(world: World, ann: Any) -> None:
    reader = _client(tokens.create(ann, "reader", team_slugs=["vision"], read_only=True).key)
    assert reader.post("/api/v1/tokens/", {"name": "w"}, format="json").status_code == 400
    made = reader.post("/api/v1/tokens/", {"name": "r", "read_only": True}, format="json")
    assert made.status_code == 201
    child = ApiToken.objects.get(pk=made.json()["id"])
    assert child.read_only and child.team_slugs == ["vision"] and not child.all_teams
    wider = reader.post("/api/v1/tokens/", {"name": "r", "read_only": True,
                                            "teams": ["speech"]}, format="json")
    assert wider.status_code == 400
    # A narrowed token cannot revoke an all-teams token.
    narrow = _client(tokens.create(ann, "vision", team_slugs=["vision"]).key)
    whole = tokens.create(ann, "all").token
    assert narrow.delete(f"/api/v1/tokens/{whole.pk}/").status_code in (403, 404)
    whole.refresh_from_db()
    assert whole.revoked_at is None
