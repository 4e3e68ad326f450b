"""Team members: everyone in a team sees who is in it; its admins add people, change roles and
remove people, through the API and the page; a team always keeps one admin; each change is in
the audit log, and a refused one changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from controlplane.security.models import AuditEntry
from controlplane.teams import access
from controlplane.teams.models import Membership, Role
from tests.security.conftest import World

MEMBERS = "/api/v1/teams/vision/members/"


def _roles(world: World) -> dict[str, str]:
    return dict(Membership.objects.filter(team=world.team)
                .values_list("user__username", "role"))


def test_teams_list_the_callers_own_with_their_role(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    listed = token_client(world.users["member"]).get("/api/v1/teams/").json()
    assert [(t["slug"], t["role"]) for t in listed["results"]] == [("vision", "member")]


def test_an_admin_adds_changes_and_removes_members(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    get_user_model().objects.create_user(username="nina")
    api = token_client(world.users["admin"])
    added = api.post(MEMBERS, {"username": "nina", "role": "viewer"}, format="json")
    assert added.status_code == 201, added.content
    nina = added.json()["id"]
    assert _roles(world)["nina"] == "viewer"
    assert api.patch(f"{MEMBERS}{nina}/", {"role": "member"}, format="json").json()["role"] \
        == "member"
    nina_user = get_user_model().objects.get(username="nina")
    assert access.can_submit(nina_user, world.team)  # the new role takes effect at once
    assert api.delete(f"{MEMBERS}{nina}/").status_code == 204
    assert "nina" not in _roles(world)
    assert not access.teams_of(nina_user).exists()
    log = [(e.action, e.detail) for e in
           AuditEntry.objects.filter(team=world.team).order_by("at", "id")]
    assert log == [("member.add", {"username": "nina", "role": "viewer"}),
                   ("member.change", {"username": "nina", "role": "member", "was": "viewer"}),
                   ("member.remove", {"username": "nina", "role": "member"})]


def test_bad_changes_say_which_field_and_change_nothing(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["admin"])
    before = _roles(world)
    unknown = api.post(MEMBERS, {"username": "ghost", "role": "viewer"}, format="json")
    assert unknown.status_code == 400 and "no user is named 'ghost'" in \
        unknown.json()["username"][0]
    twice = api.post(MEMBERS, {"username": "ann", "role": "viewer"}, format="json")
    assert twice.status_code == 400 and "already in team vision" in twice.json()["username"][0]
    bad_role = api.post(MEMBERS, {"username": "ann", "role": "owner"}, format="json")
    assert bad_role.status_code == 400 and "role" in bad_role.json()
    admin = Membership.objects.get(team=world.team, user=world.users["admin"])
    demoted = api.patch(f"{MEMBERS}{admin.pk}/", {"role": "member"}, format="json")
    assert demoted.status_code == 400 and "last admin" in demoted.json()["role"][0]
    removed = api.delete(f"{MEMBERS}{admin.pk}/")
    assert removed.status_code == 400 and "last admin" in removed.json()["username"][0]
    assert _roles(world) == before
    assert not AuditEntry.objects.filter(action__startswith="member.").exists()


def test_with_a_second_admin_the_first_may_step_down(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["admin"])
    ann = Membership.objects.get(team=world.team, user=world.users["member"])
    assert api.patch(f"{MEMBERS}{ann.pk}/", {"role": "admin"}, format="json").status_code == 200
    me = Membership.objects.get(team=world.team, user=world.users["admin"])
    assert api.patch(f"{MEMBERS}{me.pk}/", {"role": "viewer"}, format="json").status_code == 200
    # Now a viewer: no longer allowed to manage.
    assert api.delete(f"{MEMBERS}{ann.pk}/").status_code == 403


def test_members_and_viewers_read_the_list_but_cannot_change_it(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    for role in ("viewer", "member"):
        api = token_client(world.users[role])
        names = [m["username"] for m in api.get(MEMBERS).json()["results"]]
        assert names == ["ada", "ann", "vic"]
        refused = api.post(MEMBERS, {"username": "oscar", "role": "viewer"}, format="json")
        assert refused.status_code == 403
    outsider = token_client(world.users["outsider"])
    assert outsider.get(MEMBERS).status_code == 404


def test_the_members_page(world: World) -> None:
    admin, member = Client(), Client()
    admin.force_login(world.users["admin"])
    member.force_login(world.users["member"])
    shown = member.get("/teams/vision/members/").content.decode()
    assert 'data-member="vic"' in shown and "Add someone" not in shown
    assert member.post("/teams/vision/members/",
                       {"action": "add", "username": "oscar", "role": "viewer"}
                       ).status_code == 403
    added = admin.post("/teams/vision/members/",
                       {"action": "add", "username": "oscar", "role": "viewer"})
    assert added.status_code == 302
    assert _roles(world)["oscar"] == "viewer"
    me = Membership.objects.get(team=world.team, user=world.users["admin"])
    refused = admin.post("/teams/vision/members/",
                         {"action": "remove", "member": me.pk})
    assert refused.status_code == 400 and "last admin" in refused.content.decode()
    teams = admin.get("/teams/").content.decode()
    assert 'data-team="vision"' in teams and "/teams/vision/audit/" in teams
    assert _roles(world)["ada"] == Role.ADMIN
