"""A job's live events as server-sent events: GET /jobs/<id>/events/.

The job page (job_detail.js) and `vcp logs -f` hold one open; each new log line, step and
state change of the job arrives as it is stored (controlplane/logs/live.py publishes them on
Redis after the commit). The view is asynchronous: under the ASGI server (config/asgi.py) an
open stream is a coroutine waiting on Redis, not a thread held for minutes.

Events: `ready` once subscribed (the client then reads what it may have missed), `lines`
(the new lines, or `more: true` when there were too many to send), `steps`, `state`. The
stream ends ENDED_GRACE_S after the job has ended, its late lines delivered. A comment every
HEARTBEAT_S keeps proxies from closing an idle stream. A stream lasts CP_LIVE_STREAM_S at
most; the client reconnects, and access is checked again.

Access exactly as the job page: a signed-in user (a session, or an API token for the CLI)
who may see the job; another team's job is a 404, as everywhere.

The open streams of one web process share one Redis subscription (live_hub.py), and a user
holds at most CP_LIVE_STREAMS_PER_USER streams at once, in every web process together: the
streams are counted in a sorted set on that Redis (a member per stream, scored by when it
ends at the latest, so a stream whose process died stops counting then); one more is a 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from controlplane.logs import live, live_hub
from controlplane.runs import access as runs_access
from controlplane.runs.models import ACTIVE_STATES, Job
from controlplane.security.auth import ApiTokenAuthentication

logger = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
# An ended job's last lines are stored after its end (Cloud Logging delivers them late, the
# follower reads an ended attempt this much longer: FollowConfig.end_margin): its stream stays
# open as long.
ENDED_GRACE_S = 30.0
# How long a browser waits before reconnecting a stream that ended or broke.
RETRY_MS = 2000


@require_GET
async def job_events(request: HttpRequest, pk: int) -> HttpResponse:
    if _has_token(request):
        user = await sync_to_async(_token_user)(request)
        if user is None:
            return HttpResponse("Invalid, expired or revoked token.", status=401,
                                content_type="text/plain", headers={"WWW-Authenticate": "Token"})
    else:
        user = await request.auser()
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
    job = await _visible_job(user, pk)
    if not live.enabled():
        # No push here: 204 tells an EventSource not to reconnect, and the page polls.
        return HttpResponse(status=204)
    open_s = settings.CP_LIVE_STREAM_S
    if job.state not in ACTIVE_STATES:
        ended = job.ended_at or job.state_changed_at
        since = (timezone.now() - ended).total_seconds() if ended else ENDED_GRACE_S
        open_s = min(open_s, max(ENDED_GRACE_S - since, 0.0))
    place = (f"cp-live-streams:{user.pk}", uuid.uuid4().hex)
    if not await _admit(place, open_s):
        cap = settings.CP_LIVE_STREAMS_PER_USER
        return HttpResponse(f"You have {cap} open event streams (job pages, `vcp logs -f`), "
                            "the most one user may hold: close one and retry.", status=429,
                            content_type="text/plain", headers={"Retry-After": "30"})
    response = StreamingHttpResponse(
        _events(live.channel(job.pk), job.state, job.state in ACTIVE_STATES, open_s, place),
        content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a buffering proxy would hold the events back
    return response


def _has_token(request: HttpRequest) -> bool:
    """`Authorization: Token <key>`, as the CLI sends it (checked as the REST API does)."""
    return request.headers.get("Authorization", "").lower().startswith("token")


def _token_user(request: HttpRequest) -> Any | None:
    from rest_framework.exceptions import AuthenticationFailed
    from rest_framework.request import Request

    try:
        found = ApiTokenAuthentication().authenticate(Request(request))
    except AuthenticationFailed:
        return None
    return found[0] if found else None


@sync_to_async
def _visible_job(user: Any, pk: int) -> Job:
    job = runs_access.visible_jobs(user).filter(pk=pk).first()
    if job is None:
        raise Http404("no such job")
    return job


async def _admit(place: tuple[str, str], open_s: float) -> bool:
    """Count a new stream of the user (place: their set, this stream); False past the cap.
    Added first and counted after, so two streams opened at once never both slip past it."""
    cap = settings.CP_LIVE_STREAMS_PER_USER
    if not cap:
        return True
    key, stream = place
    now = time.time()
    # The latest a stream can end: its length, the grace of an ended job, and a margin.
    until = now + open_s + ENDED_GRACE_S + HEARTBEAT_S
    client = live_hub.hub(settings.CP_LIVE_URL).commands
    try:
        async with client.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, 0, now)
            pipe.zadd(key, {stream: until})
            pipe.zcard(key)
            pipe.expireat(key, int(until) + 1)
            _, _, count, _ = await pipe.execute()
        if count > cap:
            await client.zrem(key, stream)
            return False
        return True
    except aioredis.RedisError as exc:
        # The stream itself will not subscribe either and ends at once (the page polls).
        logger.warning("live stream: cannot count the user's streams: %s", exc)
        return True


def _event(kind: str, data: str) -> bytes:
    return f"event: {kind}\ndata: {data}\n\n".encode()


async def _events(name: str, state: str, active: bool, open_s: float,
                  place: tuple[str, str]) -> AsyncIterator[bytes]:
    shared = live_hub.hub(settings.CP_LIVE_URL)
    try:
        queue = await shared.listen(name)
    except aioredis.RedisError as exc:
        logger.warning("live stream: cannot subscribe: %s", exc)
        await _leave_place(shared, place)
        # A stream that ends at once: the page falls back to polling.
        yield f"retry: {RETRY_MS * 15}\n\n".encode()
        return
    try:
        yield f"retry: {RETRY_MS}\n\n".encode()
        # open: whether events follow (false for a job that ended before the grace period).
        yield _event("ready", json.dumps({"state": state, "active": active,
                                          "open": open_s > 0}))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + open_s
        while (left := deadline - loop.time()) > 0:
            try:
                data = await asyncio.wait_for(queue.get(), timeout=min(HEARTBEAT_S, left))
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if data in (live_hub.LAGGED, live_hub.BROKEN):
                return  # the page reloads what it missed and reconnects
            raw = data.decode() if isinstance(data, bytes) else ""
            try:
                body = json.loads(raw)
            except ValueError:
                continue
            kind = body.get("kind")
            if kind not in ("lines", "steps", "state"):
                continue
            yield _event(kind, raw)
            if kind == "state" and not body.get("active"):
                deadline = min(deadline, loop.time() + ENDED_GRACE_S)
    finally:
        await shared.leave(name, queue)
        await _leave_place(shared, place)


async def _leave_place(shared: live_hub.LiveHub, place: tuple[str, str]) -> None:
    """The user's place is free again."""
    with contextlib.suppress(aioredis.RedisError):
        await shared.commands.zrem(*place)
