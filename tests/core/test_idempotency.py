"""Idempotency-Key on creating POSTs: the same key and body replays the first answer, another
body is a 409, a refused request leaves the key free, and keys belong to one user."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.core.models import IdempotencyKey
from controlplane.runs.models import Job
from controlplane.security.models import ApiToken
from controlplane.teams.models import Role
from tests.people import make_user
from tests.runs.pages.conftest import CPU_REQUEST
from tests.security.conftest import World


def post(client: APIClient, url: str, body: Any, key: str | None = None) -> Any:
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(url, data=json.dumps(body), content_type="application/json", **headers)


@pytest.fixture
def member_api(world: World, token_client: Callable[[Any], APIClient]) -> APIClient:
    return token_client(world.users["member"])


def test_the_same_key_and_body_returns_the_first_answer_and_makes_one_job(
        member_api: APIClient, backend: Any) -> None:
    url = reverse("api-job-list")
    first = post(member_api, url, CPU_REQUEST, key="k-1")
    assert first.status_code == 201, first.content
    again = post(member_api, url, dict(reversed(list(CPU_REQUEST.items()))), key="k-1")
    assert again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Job.objects.count() == 1


def test_the_same_key_with_another_body_is_a_409_keyed_by_the_header(
        member_api: APIClient, backend: Any) -> None:
    url = reverse("api-job-list")
    assert post(member_api, url, CPU_REQUEST, key="k-2").status_code == 201
    other = post(member_api, url, {**CPU_REQUEST, "name": "other"}, key="k-2")
    assert other.status_code == 409
    assert "different request" in other.json()["Idempotency-Key"][0]
    assert Job.objects.count() == 1


def test_without_a_key_every_post_creates(member_api: APIClient, backend: Any) -> None:
    url = reverse("api-job-list")
    assert post(member_api, url, CPU_REQUEST).status_code == 201
    assert post(member_api, url, CPU_REQUEST).status_code == 201
    assert Job.objects.count() == 2
    assert not IdempotencyKey.objects.exists()


def test_a_refused_request_leaves_the_key_free(member_api: APIClient, backend: Any) -> None:
    url = reverse("api-job-list")
    refused = post(member_api, url, {**CPU_REQUEST, "chief": {"machine_type": "nope-1"}},
                   key="k-3")
    assert refused.status_code == 400
    assert "chief" in refused.json()
    assert not IdempotencyKey.objects.exists()
    # The corrected request may reuse the key: nothing was made with it.
    assert post(member_api, url, CPU_REQUEST, key="k-3").status_code == 201


def test_keys_are_per_user(world: World, token_client: Callable[[Any], APIClient],
                           backend: Any) -> None:
    other = make_user("bea", world.team, Role.MEMBER)
    url = reverse("api-job-list")
    assert post(token_client(world.users["member"]), url, CPU_REQUEST, key="k").status_code == 201
    assert post(token_client(other), url, CPU_REQUEST, key="k").status_code == 201
    assert Job.objects.count() == 2


def test_a_key_older_than_a_day_is_forgotten(member_api: APIClient, backend: Any) -> None:
    url = reverse("api-job-list")
    assert post(member_api, url, CPU_REQUEST, key="k-4").status_code == 201
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert post(member_api, url, {**CPU_REQUEST, "name": "new"}, key="k-4").status_code == 201
    assert Job.objects.count() == 2


@pytest.mark.parametrize("key", ["", "a b", "x" * 256, "ключ"])
def test_a_malformed_key_is_a_400(member_api: APIClient, key: str) -> None:
    response = post(member_api, reverse("api-job-list"), CPU_REQUEST, key=key)
    assert response.status_code == 400
    assert response.json()["Idempotency-Key"]


def test_tokens_are_idempotent_too(member_api: APIClient) -> None:
    url = reverse("api-token-list")
    first = post(member_api, url, {"name": "ci"}, key="t-1")
    again = post(member_api, url, {"name": "ci"}, key="t-1")
    assert first.status_code == again.status_code == 201
    assert again.json()["key"] == first.json()["key"]
    assert ApiToken.objects.filter(name="ci").count() == 1


def test_every_creating_post_is_documented_with_the_header_and_the_409(
        client: Any, db: None) -> None:
    schema = client.get("/api/schema/?format=json").json()
    creating = [("/api/v1/jobs/", "post"), ("/api/v1/jobs/{id}/resubmit/", "post"),
                ("/api/v1/templates/", "post"), ("/api/v1/tokens/", "post"),
                ("/api/v1/serving/models/", "post"), ("/api/v1/serving/endpoints/", "post"),
                ("/api/v1/serving/endpoints/{id}/deployments/", "post"),
                ("/api/v1/teams/{team}/channels/", "post"),
                ("/api/v1/teams/{team}/members/", "post"), ("/api/v1/sweeps/", "post"),
                ("/api/v1/clusters/", "post"), ("/api/v1/clusters/ray-jobs/", "post")]
    for path, method in creating:
        operation = schema["paths"][path][method]
        headers = [p["name"] for p in operation["parameters"] if p["in"] == "header"]
        assert "Idempotency-Key" in headers, path
        assert "409" in operation["responses"], path
