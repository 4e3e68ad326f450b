"""The job's event stream (GET /jobs/<id>/events/): who may open it, and that what the store
keeps arrives on it, through real Redis pub/sub, once the store's transaction commits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient
from django.utils import timezone

from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobState
from controlplane.security import tokens
from controlplane.teams.models import Role, Team
from tests.people import make_user
from vertexplan.logparse.entries import LogEntry

VERTEX_ID = "8123456789"


@pytest.fixture
def live(settings: Any, redis_url: str, postgres_url: str) -> str:
    settings.CP_LIVE_URL = redis_url
    settings.CP_LIVE_STREAM_S = 20.0
    return redis_url


def job_of(team: Team, user: Any, state: str = JobState.RUNNING) -> Job:
    return Job.objects.create(team=team, created_by=user, name="exp", request={},
                              custom_job={}, project="p", region="us-central1", state=state)


def entry(insert_id: str, text: str, *, job_id: str = VERTEX_ID,
          payload: dict[str, Any] | None = None) -> LogEntry:
    return LogEntry(insert_id=insert_id, timestamp=datetime.now(UTC), severity=200,
                    job_id=job_id, task_name="workerpool0-0",
                    text_payload=None if payload else text, json_payload=payload)


async def next_event(chunks: AsyncIterator[bytes], timeout_s: float = 10.0
                     ) -> tuple[str, dict[str, Any]]:
    """The next `event:` of the stream (comments and retry hints skipped)."""
    while True:
        chunk = (await asyncio.wait_for(anext(chunks), timeout_s)).decode()
        fields = dict(line.split(": ", 1) for line in chunk.strip().splitlines()
                      if ": " in line and not line.startswith(":"))
        if "event" in fields:
            return fields["event"], json.loads(fields["data"])


def opened(response: Any) -> AsyncIterator[bytes]:
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "text/event-stream"
    return aiter(response.streaming_content)


def test_signed_out_is_sent_to_the_login_page(live: str, team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    job = job_of(team, user)
    response = async_to_sync(AsyncClient().get)(f"/jobs/{job.pk}/events/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_another_teams_job_is_not_found(live: str, team: Team, other_team: Team) -> None:
    owner = make_user("ann", team, Role.MEMBER)
    outsider = make_user("oscar", other_team, Role.ADMIN)
    job = job_of(team, owner)
    client = AsyncClient()
    client.force_login(outsider)
    assert async_to_sync(client.get)(f"/jobs/{job.pk}/events/").status_code == 404
    assert async_to_sync(client.get)("/jobs/999999/events/").status_code == 404


def test_tokens_open_it_as_the_api_does(live: str, team: Team, other_team: Team) -> None:
    owner = make_user("ann", team, Role.VIEWER)
    job = job_of(team, owner)
    url = f"/jobs/{job.pk}/events/"
    bad = async_to_sync(AsyncClient().get)(url, headers={"Authorization": "Token nope"})
    assert bad.status_code == 401
    other_team.memberships.create(user=owner, role=Role.ADMIN)
    narrowed = tokens.create(owner, "other only", team_slugs=[other_team.slug]).key
    response = async_to_sync(AsyncClient().get)(url, headers={"Authorization": f"Token {narrowed}"})
    assert response.status_code == 404, "a token narrowed to another team sees none of this one"

    key = tokens.create(owner, "cli").key

    async def first() -> tuple[str, dict[str, Any]]:
        response = await AsyncClient().get(url, headers={"Authorization": f"Token {key}"})
        chunks = opened(response)
        try:
            return await next_event(chunks)
        finally:
            await chunks.aclose()

    assert async_to_sync(first)() == ("ready", {"state": "RUNNING", "active": True,
                                                "open": True})


def test_stored_lines_steps_and_state_arrive_on_their_jobs_stream_only(
        live: str, team: Team, django_capture_on_commit_callbacks: Any) -> None:
    user = make_user("ann", team, Role.MEMBER)
    job = job_of(team, user)
    neighbour = job_of(team, user)
    client = AsyncClient()
    client.force_login(user)
    targets = {VERTEX_ID: Target(job.pk, 1), "999": Target(neighbour.pk, 1)}

    def store(entries: list[LogEntry]) -> int:
        # Published when the store's transaction commits, not before: one callback a page,
        # its lines and its steps together.
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            store_entries(entries, targets)
        return len(callbacks)

    def end() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            job_state_to(job.pk, JobState.SUCCEEDED)

    async def watch() -> list[tuple[str, dict[str, Any]]]:
        chunks = opened(await client.get(f"/jobs/{job.pk}/events/"))
        seen = [await next_event(chunks)]
        first = entry("a1", "hello <b>from</b> rank 0")
        try:
            assert await sync_to_async(store)([
                entry("n1", "the neighbour's line", job_id="999")]) == 1
            assert await sync_to_async(store)([
                first,
                entry("a2", "", payload={"event": "step", "step": 7, "total_steps": 10,
                                         "loss": 2.5, "message": "step 7"})]) == 1
            seen += [await next_event(chunks), await next_event(chunks)]
            # Read again (the follower re-reads on purpose): nothing new, nothing sent (the
            # next event is the state change). An entry read again is the same entry, time
            # and all.
            await sync_to_async(store)([first])
            await sync_to_async(end)()
            seen.append(await next_event(chunks))
            # Its late lines still come: the stream stays open a while after the end.
            assert await sync_to_async(store)([entry("a3", "the last words")]) == 1
            seen.append(await next_event(chunks))
        finally:
            await chunks.aclose()
        return seen

    seen = async_to_sync(watch)()
    assert [kind for kind, _ in seen] == ["ready", "lines", "steps", "state", "lines"]
    lines = seen[1][1]["lines"]
    assert [line["id"] for line in lines] == ["a1", "a2"]
    assert lines[0]["message"] == "hello <b>from</b> rank 0"  # text: the page never parses it
    assert lines[0]["severity_name"] == "INFO" and lines[0]["replica"] == "workerpool0-0"
    assert seen[2][1] == {"kind": "steps", "attempt": 1, "step": 7}
    assert seen[3][1] == {"kind": "state", "state": "SUCCEEDED", "active": False}
    assert [line["message"] for line in seen[4][1]["lines"]] == ["the last words"]


def job_state_to(job_id: int, state: str) -> None:
    from django.db import transaction

    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        assert job.update_state(state, source="test")


def test_a_job_that_ended_a_while_ago_says_so_and_closes(live: str, team: Team) -> None:
    user = make_user("ann", team, Role.MEMBER)
    job = job_of(team, user, JobState.FAILED)
    Job.objects.filter(pk=job.pk).update(ended_at=timezone.now() - timedelta(minutes=5))
    client = AsyncClient()
    client.force_login(user)

    async def read() -> list[tuple[str, dict[str, Any]]]:
        chunks = opened(await client.get(f"/jobs/{job.pk}/events/"))
        first = await next_event(chunks)
        with pytest.raises(StopAsyncIteration):
            await next_event(chunks)
        return [first]

    assert async_to_sync(read)() == [("ready", {"state": "FAILED", "active": False,
                                                "open": False})]


def test_without_a_push_server_the_page_is_told_to_poll(settings: Any, team: Team) -> None:
    settings.CP_LIVE_URL = ""
    user = make_user("ann", team, Role.MEMBER)
    job = job_of(team, user)
    client = AsyncClient()
    client.force_login(user)
    # 204: an EventSource stops reconnecting, and job_detail.js keeps polling.
    assert async_to_sync(client.get)(f"/jobs/{job.pk}/events/").status_code == 204
