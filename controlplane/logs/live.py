"""A job's news pushed to whoever watches it: new log lines, steps and state changes.

Published on Redis pub/sub once the transaction that stored them commits, so a watcher is
never told of a row it cannot read yet (controlplane/logs/stream.py serves them as
server-sent events). Best effort by design: the database stays the truth, a watcher reads it
when it (re)connects, and the job page falls back to polling when the stream fails, so a lost
message or a Redis outage delays a line, never loses it. Nothing here raises into the store.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from vertexplan import summaries

logger = logging.getLogger(__name__)

# The log panel shows this many lines; a larger batch is announced, not sent (the page then
# reads the panel again).
MAX_LINES_PER_MESSAGE = 200
# A message is at most about this big: long lines are cut for the push (the panel's next read
# shows them whole).
MAX_MESSAGE_CHARS = 2000

# One client (and connection pool) per URL and process.
_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def enabled() -> bool:
    return bool(getattr(settings, "CP_LIVE_URL", ""))


def channel(job_id: int) -> str:
    """Pub/sub channels are shared by every database of a Redis server: the name carries the
    control plane's database, so two installations (or test runs) on one Redis never mix."""
    return f"cp-live:{connection.settings_dict['NAME']}:job:{int(job_id)}"


def line_payload(attempt: int, timestamp: datetime, severity: int, replica: str,
                 message: str, insert_id: str) -> dict[str, Any]:
    """One line as the log panel renders it (logs/partials/logs.html)."""
    return {
        "id": insert_id,
        "attempt": attempt,
        "t": timestamp.isoformat(),
        # As the panel's template writes it (date:"m-d H:i:s.u", cut to milliseconds).
        "time": timezone.localtime(timestamp).strftime("%m-%d %H:%M:%S.%f")[:18],
        "severity": severity,
        "severity_name": summaries.severity_name(severity),
        "severity_class": summaries.severity_class(severity),
        "replica": replica,
        "message": message[:MAX_MESSAGE_CHARS],
    }


def page_stored(rows: Sequence[tuple[Any, ...]], new: set[tuple[int, str]] | None,
                steps: Sequence[tuple[Any, ...]]) -> None:
    """A page just stored: its line rows (store.LINE_COLUMNS order, time order), of which the
    (job, insert_id) pairs in `new` were new (all of them when None), and its step rows
    (store.STEP_COLUMNS order, time order). Published after the commit, to the jobs someone
    watches (with each job's newest step): one question to Redis for the whole page, and the
    messages in one round trip. Asked after the commit, so a watcher that subscribes later
    reads these from the database when it starts."""
    if not enabled() or not (rows or steps):
        return
    transaction.on_commit(lambda: _publish_page(rows, new, steps), robust=True)


def _publish_page(rows: Sequence[tuple[Any, ...]], new: set[tuple[int, str]] | None,
                  step_rows: Sequence[tuple[Any, ...]]) -> None:
    # Job -> (attempt, step) of its newest step row.
    steps = {int(row[0]): (int(row[1]), int(row[2])) for row in step_rows}
    jobs = sorted({int(row[0]) for row in rows} | set(steps))
    client = _redis()
    try:
        counts = client.pubsub_numsub(*(channel(job_id) for job_id in jobs))
    except redis.RedisError as exc:
        logger.warning("live update not published: %s", exc)
        return
    watched = {job_id for job_id, (_, listeners) in zip(jobs, counts, strict=True)
               if listeners}
    if not watched:
        return  # nobody watches: no payload built (a backlog's pages cost nothing here)
    by_job: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        if row[0] in watched and (new is None or (row[0], row[6]) in new):
            by_job.setdefault(row[0], []).append(row)
    pipe = client.pipeline(transaction=False)
    for job_id, kept in by_job.items():
        more = len(kept) > MAX_LINES_PER_MESSAGE
        lines = [line_payload(*row[1:]) for row in kept[-MAX_LINES_PER_MESSAGE:]]
        pipe.publish(channel(job_id), _body("lines", {"lines": lines, "more": more}))
    for job_id, (attempt, step) in steps.items():
        if job_id in watched:
            pipe.publish(channel(job_id), _body("steps", {"attempt": attempt, "step": step}))
    try:
        pipe.execute()
    except redis.RedisError as exc:
        # The page's fallback poll and the reconnect's catch-up read cover what is lost.
        logger.warning("live update not published: %s", exc)


def _body(kind: str, data: dict[str, Any]) -> str:
    return json.dumps({"kind": kind, **data}, separators=(",", ":"))


def state_changed(job_id: int, state: str, active: bool) -> None:
    publish(job_id, "state", {"state": state, "active": active})


def publish(job_id: int, kind: str, data: dict[str, Any]) -> None:
    """Send once the current transaction commits (at once outside one)."""
    if not enabled():
        return
    name = channel(job_id)
    body = _body(kind, data)
    transaction.on_commit(lambda: _send(name, body), robust=True)


def _send(name: str, body: str) -> None:
    try:
        _redis().publish(name, body)
    except redis.RedisError as exc:
        # The page's fallback poll and the reconnect's catch-up read cover what is lost.
        logger.warning("live update not published (%s): %s", name, exc)


def _redis() -> redis.Redis:
    url = settings.CP_LIVE_URL
    with _clients_lock:
        if url not in _clients:
            _clients[url] = redis.Redis.from_url(url, socket_timeout=1.0,
                                                 socket_connect_timeout=1.0)
        return _clients[url]


