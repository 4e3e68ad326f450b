"""Several tokens per user, stored hashed, made and revoked on a page or through the API."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.security.models import ApiToken, AuditEntry
from tests.security.conftest import World


def _key_from_page(html: str) -> str:
    match = re.search(r'id="new-token-key">([^<]+)<', html)
    assert match, html
    return match.group(1)


def test_page_makes_a_token_shown_once_and_stores_only_its_hash(
        client: Client, world: World, make_job: Callable[..., Job]) -> None:
    member = world.users["member"]
    make_job(world.team, member, name="mine")
    client.force_login(member)

    made = client.post(reverse("token-list"), {"name": "ci"})
    assert made.status_code == 200
    assert made["Cache-Control"] == "no-store"
    key = _key_from_page(made.content.decode())
    stored = ApiToken.objects.get(user=member)
    assert stored.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in {stored.prefix, stored.key_hash, stored.name}
    assert key.startswith(stored.prefix)

    # The list shows the prefix, never the key again.
    listed = client.get(reverse("token-list")).content.decode()
    assert stored.prefix in listed and key not in listed

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    jobs = api.get("/api/v1/jobs/")
    assert jobs.status_code == 200
    assert [j["name"] for j in jobs.json()["results"]] == ["mine"]
    stored.refresh_from_db()
    assert stored.last_used_at is not None


def test_a_token_needs_a_name(client: Client, world: World) -> None:
    client.force_login(world.users["viewer"])
    response = client.post(reverse("token-list"), {"name": "  "})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_revoked_token_is_refused_and_others_keep_working(
        client: Client, world: World) -> None:
    user = world.users["viewer"]
    client.force_login(user)
    first = _key_from_page(client.post(reverse("token-list"), {"name": "a"}).content.decode())
    second = _key_from_page(client.post(reverse("token-list"), {"name": "b"}).content.decode())
    assert first != second
    token = ApiToken.objects.get(user=user, name="a")

    revoked = client.post(reverse("token-revoke", args=[token.pk]))
    assert revoked.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None and not token.active

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {first}")
    refused = api.get("/api/v1/jobs/")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"] == "Token"
    api.credentials(HTTP_AUTHORIZATION=f"Token {second}")
    assert api.get("/api/v1/jobs/").status_code == 200
    actions = list(AuditEntry.objects.filter(actor=user).values_list("action", flat=True))
    assert sorted(actions) == ["token.create", "token.create", "token.revoke"]


def test_nobody_revokes_or_sees_another_users_token(
        client: Client, world: World, token_client: Callable[[Any], APIClient]) -> None:
    theirs = token_client(world.users["admin"])
    token = ApiToken.objects.get(user=world.users["admin"])
    client.force_login(world.users["member"])
    assert client.post(reverse("token-revoke", args=[token.pk])).status_code == 404
    mine = token_client(world.users["member"])
    assert mine.get(f"/api/v1/tokens/{token.pk}/").status_code == 404
    assert mine.delete(f"/api/v1/tokens/{token.pk}/").status_code == 404
    token.refresh_from_db()
    assert token.active
    assert theirs.get("/api/v1/jobs/").status_code == 200


def test_api_makes_lists_and_revokes_tokens(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["viewer"])
    made = api.post("/api/v1/tokens/", {"name": "laptop"}, format="json")
    assert made.status_code == 201
    key = made.json()["key"]
    assert key.startswith(made.json()["prefix"])

    listed = api.get("/api/v1/tokens/").json()["results"]
    assert {t["name"] for t in listed} == {"test", "laptop"}
    assert all("key" not in t and "key_hash" not in t for t in listed)
    assert key not in str(listed)

    gone = api.delete(f"/api/v1/tokens/{made.json()['id']}/")
    assert gone.status_code == 200 and gone.json()["active"] is False
    fresh = APIClient()
    fresh.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert fresh.get("/api/v1/tokens/").status_code == 401


def test_missing_name_is_a_field_error(world: World,
                                       token_client: Callable[[Any], APIClient]) -> None:
    response = token_client(world.users["viewer"]).post("/api/v1/tokens/", {}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()


def test_bad_and_malformed_headers_are_401(world: World) -> None:
    api = APIClient()
    for header in ("Token cpt_not-a-real-key", "Token", "Token a b", "Token 0123abcd"):
        api.credentials(HTTP_AUTHORIZATION=header)
        assert api.get("/api/v1/jobs/").status_code == 401, header


def test_inactive_user_token_is_refused(world: World,
                                        token_client: Callable[[Any], APIClient]) -> None:
    user = world.users["member"]
    api = token_client(user)
    user.is_active = False
    user.save()
    assert api.get("/api/v1/jobs/").status_code == 401


def test_token_follows_the_users_current_teams(
        world: World, make_job: Callable[..., Job],
        token_client: Callable[[Any], APIClient]) -> None:
    member = world.users["member"]
    job = make_job(world.team, member)
    api = token_client(member)
    assert api.get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    member.memberships.all().delete()
    assert api.get(f"/api/v1/jobs/{job.pk}/").status_code == 404


def test_seed_demo_prints_a_working_token_and_revokes_the_last(world: World) -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    def seed() -> str:
        out = StringIO()
        call_command("seed_demo", "--username", "demo", "--team", "demo", stdout=out)
        return json.loads(out.getvalue())["token"]

    first, second = seed(), seed()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {second}")
    assert api.get("/api/v1/jobs/").status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {first}")
    assert api.get("/api/v1/jobs/").status_code == 401


def test_the_lookup_reads_what_the_orm_reads_in_one_query(
        world: World, django_assert_num_queries: Any) -> None:
    """find() reads the token, its user and its team ids in one statement written once per
    process (tokens._lookup_statement): the same values as the ORM's, none for a wrong key."""
    from controlplane.security import tokens

    member = world.users["member"]
    made = tokens.create(member, "narrow", team_slugs=[world.team.slug])
    tokens.find(made.key)  # its last use written: the next find only reads
    with django_assert_num_queries(1):
        found = tokens.find(made.key)
    assert found is not None
    orm = ApiToken.objects.select_related("user").get(pk=made.token.pk)
    names = [f.attname for f in ApiToken._meta.concrete_fields]
    assert [getattr(found, n) for n in names] == [getattr(orm, n) for n in names]
    user_names = [f.attname for f in type(orm.user)._meta.concrete_fields]
    with django_assert_num_queries(0):
        assert [getattr(found.user, n) for n in user_names] == [
            getattr(orm.user, n) for n in user_names]
    assert tokens.team_ids(found) == frozenset({world.team.pk})
    assert tokens.find(made.key[:-1] + ("A" if made.key[-1] != "A" else "B")) is None
