"""TailLogEntries mode: fresh entries streamed as Cloud Logging receives them.

A stream has its own quota (60,000 entries a minute, 10 open sessions per project) apart from
entries.list's 60 calls a minute, so tailing frees the list budget for the settle pass, which
remains what guarantees completeness: a stream may leave entries out (suppression_info) and
says nothing of what happened while it was being reopened. Entries stored from both are
stored once (unique insertIds).

One session per filter of job ids (the same 20,000-character split as the list queries). When
the set of followed jobs changes, new sessions open before the old ones close, so nothing is
missed in between; at most MAX_SESSIONS are used, half the project's limit, for that overlap.

Past MAX_SESSIONS filters (some 2,000 running jobs), a list of ids cannot cover them all: one
session then reads every Vertex job's entries of the project (`resource.type="ml_job"`) and
stores the followed jobs' ones, the rest (jobs the control plane did not submit, in a shared
project) read and dropped, as every page's entries of jobs not followed are. It stays open while
the followed jobs change: only the map of where entries go is replaced, so a fleet whose jobs
start and end every few seconds does not reopen streams at every refresh. Its cost is the
stream's own quota (60,000 entries a minute per project), shared with any job not ours.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connections
from django.utils import timezone

from controlplane.backends.base import Backend, TailStream
from controlplane.backends.errors import BackendError
from controlplane.logs.options import FollowConfig
from controlplane.logs.store import Target, store_entries
from vertexplan.logparse.filters import VERTEX_JOBS, job_filters

logger = logging.getLogger(__name__)

MAX_SESSIONS = 5


@dataclass
class TailStats:
    batches: int = 0
    entries: int = 0
    new_lines: int = 0
    suppressed: int = 0
    sessions_opened: int = 0
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class _Session:
    def __init__(self, stream: TailStream, targets: dict[str, Target], stats: TailStats) -> None:
        # Read at each batch: a project-wide session's map is replaced as jobs come and go
        # (one assignment, so a batch is routed by one map or the other, never a mix).
        self.stream, self.targets, self.stats = stream, targets, stats
        self.alive = True
        self.thread = threading.Thread(target=self._run, name="log-tail", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for batch in self.stream:
                stored = store_entries(batch.entries, self.targets) if batch.entries else None
                with self.stats.lock:
                    self.stats.batches += 1
                    self.stats.entries += len(batch.entries)
                    self.stats.suppressed += batch.suppressed
                    self.stats.new_lines += stored.lines if stored else 0
        except BackendError as exc:
            logger.warning("log tail: %s; reopened at the next refresh", exc)
            with self.stats.lock:
                self.stats.errors += 1
        except Exception:
            logger.exception("log tail session failed; reopened at the next refresh")
            with self.stats.lock:
                self.stats.errors += 1
        finally:
            self.alive = False
            connections.close_all()  # this thread's own connections

    def close(self) -> None:
        self.stream.cancel()
        self.thread.join(timeout=10)


class TailFollower:
    """Keeps one tail session per filter of the followed jobs open."""

    def __init__(self, backend: Backend, config: FollowConfig,
                 followed: Callable[[], dict[str, Target]]) -> None:
        self.backend, self.config, self.followed = backend, config, followed
        self.stats = TailStats()
        self._sessions: list[_Session] = []
        self._ids: tuple[str, ...] = ()
        self._wide = False  # the one session reads every Vertex job of the project

    def refresh(self) -> None:
        """Reopen the sessions when the followed jobs changed or a session ended."""
        targets = self.followed()
        ids = tuple(sorted(targets))
        alive = all(s.alive for s in self._sessions)
        if ids == self._ids and alive:
            return
        queries = job_filters(ids, None)
        wide = len(queries) > MAX_SESSIONS
        if wide and self._wide and alive:
            # The project-wide session reads every job already: only where entries go changes.
            self._sessions[0].targets = dict(targets)
            self._ids = ids
            return
        if wide:
            logger.info("log tail: %d jobs need %d filters of ids, more than %d sessions: one "
                        "session reads the project's Vertex jobs", len(ids), len(queries),
                        MAX_SESSIONS)
            queries = [VERTEX_JOBS]
        old = self._sessions
        self._sessions = []
        for query in queries:
            try:
                stream = self.backend.tail_log_entries(
                    query, buffer_window_s=self.config.tail_buffer_window_s)
            except BackendError as exc:
                logger.warning("log tail: cannot open a session: %s", exc)
                self.stats.errors += 1
                continue
            self._sessions.append(_Session(stream, dict(targets), self.stats))
            self.stats.sessions_opened += 1
        opened = len(self._sessions) == len(queries)
        self._ids = ids if opened else ()
        self._wide = wide and opened
        # The new sessions are open (opening waits for the service's confirmation): only now
        # do the old ones stop, so no entry falls between them.
        for session in old:
            session.close()

    def close(self) -> None:
        for session in self._sessions:
            session.close()
        self._sessions = []
        self._ids = ()
        self._wide = False


def run(backend: Backend, config: FollowConfig, followed: Callable[[], dict[str, Target]],
        stop: threading.Event, refresh_s: float = 5.0) -> TailStats:
    """Tail until `stop` is set, checking the followed jobs every `refresh_s`."""
    follower = TailFollower(backend, config, followed)
    try:
        while not stop.is_set():
            follower.refresh()
            stop.wait(refresh_s)
    finally:
        follower.close()
    logger.info("log tail stopped at %s: %s", timezone.now(), follower.stats)
    return follower.stats
