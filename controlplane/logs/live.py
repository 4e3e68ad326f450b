"""A job's news pushed to whoever watches it: new log lines, steps and state changes.

Published on Redis pub/sub once the transaction that stored them commits, so a watcher is
never told of a row it cannot read yet (controlplane/logs/stream.py serves them as
server-sent events), by one thread per process in the order the transactions committed: the
committing thread (the log store between two pages) does not wait for Redis. Best effort by
design: the database stays the truth, a watcher reads it when it (re)connects, and the job
page falls back to polling when the stream fails, so a lost message or a Redis outage delays
a line, never loses it. Nothing here raises into the store.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
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

# Sends waiting for the publishing thread beyond which new ones are dropped (Redis stalled:
# each send waits up to its socket timeout, and a page's send holds the page's rows).
MAX_WAITING = 1000

# One client (and connection pool) per URL and process.
_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def enabled() -> bool:
    return bool(getattr(settings, "CP_LIVE_URL", ""))


def channel(job_id: int, database: str | None = None) -> str:
    """Pub/sub channels are shared by every database of a Redis server: the name carries the
    control plane's database (this thread's connection's unless given), so two
    installations (or test runs) on one Redis never mix."""
    name = database if database is not None else connection.settings_dict["NAME"]
    return f"cp-live:{name}:job:{int(job_id)}"


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
    url, database = settings.CP_LIVE_URL, connection.settings_dict["NAME"]
    transaction.on_commit(
        lambda: _publisher.submit(lambda: _publish_page(url, database, rows, new, steps)),
        robust=True)


def _publish_page(url: str, database: str, rows: Sequence[tuple[Any, ...]],
                  new: set[tuple[int, str]] | None, step_rows: Sequence[tuple[Any, ...]]
                  ) -> None:
    # Job -> (attempt, step) of its newest step row.
    steps = {int(row[0]): (int(row[1]), int(row[2])) for row in step_rows}
    jobs = sorted({int(row[0]) for row in rows} | set(steps))
    client = _redis(url)

    def channel_of(job_id: int) -> str:
        return channel(job_id, database)

    try:
        counts = client.pubsub_numsub(*(channel_of(job_id) for job_id in jobs))
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
        pipe.publish(channel_of(job_id), _body("lines", {"lines": lines, "more": more}))
    for job_id, (attempt, step) in steps.items():
        if job_id in watched:
            pipe.publish(channel_of(job_id),
                         _body("steps", {"attempt": attempt, "step": step}))
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
    url, name, body = settings.CP_LIVE_URL, channel(job_id), _body(kind, data)
    transaction.on_commit(lambda: _publisher.submit(lambda: _send(url, name, body)),
                          robust=True)


def _send(url: str, name: str, body: str) -> None:
    try:
        _redis(url).publish(name, body)
    except redis.RedisError as exc:
        # The page's fallback poll and the reconnect's catch-up read cover what is lost.
        logger.warning("live update not published (%s): %s", name, exc)


def _redis(url: str) -> redis.Redis:
    with _clients_lock:
        if url not in _clients:
            _clients[url] = redis.Redis.from_url(url, socket_timeout=1.0,
                                                 socket_connect_timeout=1.0)
        return _clients[url]


class _Publisher:
    """The process's publishing thread, started at the first send (and again in a forked
    child, which inherits no thread), sending in the order sends were submitted."""

    def __init__(self) -> None:
        self._waiting: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, send: Callable[[], None]) -> None:
        if self._waiting.qsize() >= MAX_WAITING:
            # Best effort: the page's fallback poll and the reconnect's catch-up read cover it.
            logger.warning("live update dropped: %d sends already wait for Redis", MAX_WAITING)
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="cp-live-publisher",
                                                daemon=True)
                self._thread.start()
        self._waiting.put(send)

    def _run(self) -> None:
        while True:
            send = self._waiting.get()
            try:
                send()
            except Exception:
                logger.exception("live update not published")


_publisher = _Publisher()


def _forked() -> None:
    # The parent's thread and what waited for it stay with the parent.
    global _publisher
    _publisher = _Publisher()


os.register_at_fork(after_in_child=_forked)
