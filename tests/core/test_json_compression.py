"""Gzip for the API's JSON answers only: never an HTML page (BREACH reads a CSRF token back
from compressed sizes of a page that also echoes user input), never a stream (a live line
must not wait for a compressed block to fill), never a POST's answer (a new token's key)."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client
from django.utils import timezone

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user

GZIP = {"HTTP_ACCEPT_ENCODING": "gzip"}


def _jobs(team: Team, user: Any, count: int, state: str = JobState.RUNNING) -> list[Job]:
    return [Job.objects.create(team=team, created_by=user, name=f"exp-{i}", request={},
                               custom_job={}, project="p", region="us-central1", state=state)
            for i in range(count)]


def test_api_json_is_compressed_for_a_client_that_asks(team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    _jobs(team, user, 5)
    client = Client()
    client.force_login(user)
    plain = client.get("/api/v1/jobs/")
    packed = client.get("/api/v1/jobs/", **GZIP)
    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    assert json.loads(gzip.decompress(packed.content)) == plain.json()


def test_pages_and_posts_are_never_compressed(team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    _jobs(team, user, 5)
    client = Client()
    client.force_login(user)
    page = client.get("/", **GZIP)
    assert page.status_code == 200 and "csrf" in page.content.decode().lower()
    assert "Content-Encoding" not in page
    created = client.post("/api/v1/tokens/", {"name": "ci"}, content_type="application/json",
                          **GZIP)
    assert created.status_code == 201, created.content
    assert "Content-Encoding" not in created and "key" in created.json()


def test_the_live_event_stream_is_sent_as_it_is_made(settings: Any, redis_url: str,
                                                     team: Team) -> None:
    settings.CP_LIVE_URL = redis_url
    user = make_user("ann", team, Role.MEMBER)
    job = _jobs(team, user, 1, JobState.FAILED)[0]
    Job.objects.filter(pk=job.pk).update(ended_at=timezone.now() - timedelta(minutes=5))
    client = AsyncClient()
    client.force_login(user)

    async def read() -> tuple[Any, bytes]:
        response = await client.get(f"/jobs/{job.pk}/events/", **GZIP)
        return response, b"".join([chunk async for chunk in response.streaming_content])

    response, body = async_to_sync(read)()
    assert response["Content-Type"] == "text/event-stream"
    assert "Content-Encoding" not in response
    assert b"event: ready" in body
