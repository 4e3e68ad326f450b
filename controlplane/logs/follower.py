"""Follow Cloud Logging for every running job of a project with a constant number of calls.

entries.list allows 60 calls a minute per project, whatever the number of jobs (VERTEX_FACTS.md
section 5), so the follower never polls per job: one filter ORs the job ids of every attempt
it follows, split only where the 20,000-character limit forces it. Each attempt has a
persisted cursor (controlplane.logs.models.LogCursor) with two positions:

- head: the fresh read. Every sweep reads each group of attempts from the lowest head in it
  (minus a small overlap) to the present, 1000 entries a page, oldest first. This is what
  makes a printed line appear on the job page within seconds.
- settled: every entry before it is stored, late arrivals included. Cloud Logging can make an
  entry visible a while after its timestamp, after the head read has passed it; so each
  stretch of time is read once more, `late_window` after it, in full pages. An attempt is done
  when its settled position passes its end: its last lines are in.

Attempts whose positions are close are read together; one far behind (a new job, a job seen
late, or after the follower was down) gets its own query until it catches up, so the others
do not re-read its backlog. Entries read twice are stored once (unique keys on insertId).

The budget (controlplane.logs.quota) keeps the project under its quota with headroom and pauses on
RESOURCE_EXHAUSTED; within it, the groups take turns a page at a time, fresh reads first, so a
backlog slows nobody's live tail. Cursors advance in the transaction that stores the page, so
a follower killed at any point loses nothing and stores nothing twice when it starts again.

With TailLogEntries on (CP_LOG_TAIL, controlplane.logs.tail), the stream delivers fresh entries and
the sweeps only settle.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from controlplane.backends.base import Backend, LogPage, get_backend
from controlplane.backends.errors import QuotaExceeded, TransientBackendError
from controlplane.logs.models import LogCursor
from controlplane.logs.options import FollowConfig, follow_config
from controlplane.logs.quota import ReadBudget
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import JobAttempt
from vertexplan.logparse import filters
from vertexplan.logparse.filters import MAX_FILTER_CHARS, job_filters

__all__ = ["MAX_FILTER_CHARS", "SweepStats", "follow", "job_filters"]

logger = logging.getLogger(__name__)

HEAD, SETTLE = "head", "settle"
# A settle pass this many settle_every late goes before the fresh reads.
SETTLE_OVERDUE = 4
# A position in Cloud Logging's order: a timestamp, and the insertId of the entry read there
# ("" for the start of that instant).
Position = tuple[datetime, str]
# Room kept in every filter for the insertId of its lower position (Cloud Logging's are
# 16 to 30 characters).
_LONG_INSERT_ID = "x" * 64
# How a pass reads a cursor's position.
_Reader = Callable[[LogCursor], Position]


@dataclass
class SweepStats:
    calls: int = 0             # entries.list calls made
    entries: int = 0           # entries received
    new_lines: int = 0         # log lines stored for the first time
    streams: int = 0           # queries planned (groups of attempts x passes)
    followed: int = 0          # attempts followed
    finished: int = 0          # attempts whose last lines are in
    quota_errors: int = 0
    wait_s: float = 0.0        # the budget's wait when the sweep stopped for it
    caught_up: bool = True     # every planned query read to its end


@dataclass
class _Stream:
    kind: str
    members: list[LogCursor]
    lower: Position
    upper: datetime | None
    query: str
    started: datetime | None = None
    token: str = ""
    done: bool = False


Clock = Callable[[], datetime]


def follow(backend: Backend | None = None, config: FollowConfig | None = None,
           clock: Clock = timezone.now) -> SweepStats:
    """One sweep over every attempt the project's follower has open. Safe to run again at any
    time; the Celery beat task runs it every CP_FOLLOW_INTERVAL_S under a singleton lease."""
    backend = backend or get_backend()
    config = config or follow_config()
    cursors = open_cursors(backend.project, clock(), config)
    stats = SweepStats(followed=len(cursors))
    stats.finished = _close_finished(cursors, config)
    cursors = [c for c in cursors if not c.done]
    if cursors:
        _Sweep(backend, config, clock, cursors, stats).run()
    return stats


class _Sweep:
    def __init__(self, backend: Backend, config: FollowConfig, clock: Clock,
                 cursors: list[LogCursor], stats: SweepStats) -> None:
        self.backend, self.config, self.clock = backend, config, clock
        self.cursors, self.stats = cursors, stats
        self.targets = {c.attempt.vertex_job_id: Target(c.attempt.job_id, c.attempt.number)
                        for c in cursors}
        self.budget = ReadBudget(backend.project, config.reads_per_minute, config.burst)
        self.deadline = time.monotonic() + config.sweep_seconds

    def run(self) -> None:
        # Fresh reads first; the settle reads are planned after them, from the positions the
        # fresh reads reached (a backlog the fresh read covered is not read again). When the
        # budget has not allowed a settle pass for long (more entries than the quota can
        # carry), it goes first: late entries are then slower to appear, but still appear.
        if _settle_overdue(self.cursors, self.clock(), self.config) and not self.settle():
            return
        if not self.config.tail:
            heads = plan_heads(self.cursors, self.config, self.clock())
            self.stats.streams += len(heads)
            if not self.drain(heads):
                return
        if self.settle():
            self.stats.finished += _close_finished(self.cursors, self.config)

    def settle(self) -> bool:
        settles = plan_settles(self.cursors, self.clock(), self.config)
        self.stats.streams += len(settles)
        return self.drain(settles)

    def drain(self, streams: list[_Stream]) -> bool:
        """Read the streams to their ends, a page from each in turn, so one long backlog does
        not hold the others back. False when the budget, the time or an error stopped it."""
        active = list(streams)
        while active:
            for stream in list(active):
                if time.monotonic() > self.deadline or not self.read_page(stream):
                    self.stats.caught_up = False
                    return False
                if stream.done:
                    active.remove(stream)
        return True

    def read_page(self, stream: _Stream) -> bool:
        """Read and store the stream's next page. False when the sweep must stop."""
        wait = self.budget.wait_s()
        if (0 < wait <= self.config.budget_nap_s and time.monotonic() + wait < self.deadline
                and self.clock() - stream.lower[0] > self.config.group_gap):
            # A backlog's next page is full whenever it is read, and the next token is nearer
            # than the next sweep: waiting here spends the budget at its pace instead of the
            # beat's. (A fresh read waits for the next sweep: its page is fuller then.)
            time.sleep(wait)
            wait = self.budget.wait_s()
        if wait > 0:
            self.stats.wait_s = wait
            return False
        if stream.started is None:
            stream.started = self.clock()
        self.budget.spend()
        self.stats.calls += 1
        try:
            page = self.backend.list_log_entries(stream.query, page_size=self.config.page_size,
                                                 page_token=stream.token)
        except QuotaExceeded as exc:
            self.stats.quota_errors += 1
            pause = self.budget.exhausted()
            self.budget.save()
            logger.warning("log follower: %s; pausing %.0f s", exc, pause)
            return False
        except TransientBackendError as exc:
            self.budget.save()
            logger.warning("log follower: %s; the next sweep tries again", exc)
            return False
        self.budget.succeeded()
        stream.token = page.next_page_token
        stream.done = not page.next_page_token
        # The page's rows and the cursors that say they are stored commit together.
        with transaction.atomic():
            stored = store_entries(page.entries, self.targets)
            advance(stream, page, self.config)
            self.budget.save()
        self.stats.entries += len(page.entries)
        self.stats.new_lines += stored.lines
        return True


def open_cursors(project: str, now: datetime, config: FollowConfig) -> list[LogCursor]:
    """The open cursors of the project, after opening one for each attempt seen for the first
    time: from its creation (less clock skew), so nothing it printed is missed."""
    new = []
    for attempt in _fresh_attempts(project, now, config):
        times = [t for t in (attempt.created_at, attempt.submitted_at) if t is not None]
        start = min(times) - config.start_margin
        new.append(LogCursor(attempt=attempt, project=project, head_at=start, settled_at=start))
    LogCursor.objects.bulk_create(new, ignore_conflicts=True)
    return list(LogCursor.objects.filter(project=project, done=False)
                .select_related("attempt").order_by("settled_at", "pk"))


def _fresh_attempts(project: str, now: datetime, config: FollowConfig) -> Any:
    """The attempts with a CustomJob and no cursor yet, unless they ended too long ago."""
    return (JobAttempt.objects.filter(job__project=project, log_cursor__isnull=True)
            .exclude(vertex_job_id="")
            .filter(Q(ended_at__isnull=True) | Q(ended_at__gte=now - config.max_backfill)))


def nothing_to_follow() -> bool:
    """No open cursor and no attempt to open one for: a sweep would read nothing."""
    project, config = get_backend().project, follow_config()
    return not (LogCursor.objects.filter(project=project, done=False).exists()
                or _fresh_attempts(project, timezone.now(), config).exists())


def followed_targets(project: str, config: FollowConfig) -> dict[str, Target]:
    """Where the entries of each followed CustomJob go (for the tail sessions)."""
    return {c.attempt.vertex_job_id: Target(c.attempt.job_id, c.attempt.number)
            for c in open_cursors(project, timezone.now(), config)}


def _end(cursor: LogCursor, config: FollowConfig) -> datetime | None:
    ended = cursor.attempt.ended_at
    return ended + config.end_margin if ended is not None else None


def _close_finished(cursors: Iterable[LogCursor], config: FollowConfig) -> int:
    done = []
    for cursor in cursors:
        end = _end(cursor, config)
        if not cursor.done and end is not None and cursor.settled_at >= end:
            cursor.done = True
            done.append(cursor.pk)
    if done:
        LogCursor.objects.filter(pk__in=done).update(done=True)
    return len(done)


# --- planning ---------------------------------------------------------------------------------

def plan_heads(cursors: Sequence[LogCursor], config: FollowConfig,
               now: datetime | None = None) -> list[_Stream]:
    """The fresh reads, most current group first."""
    wanting = [c for c in cursors if _wants_head(c, config)]
    heads = _groups(HEAD, wanting, lambda c: (c.head_at, c.head_insert_id), None, config,
                    now)
    if now is not None and any(now - s.lower[0] > config.group_gap for s in heads):
        heads = [s for s in heads if _fresh_read_due(s, now, config)]
    return sorted(heads, key=lambda s: s.lower, reverse=True)


def _fresh_read_due(stream: _Stream, now: datetime, config: FollowConfig) -> bool:
    """While a backlog is read the quota is the limit and every call should bring a full
    page: an attempt that is caught up is read every backlog_fresh_every, not every sweep
    (its lower bound is where its previous read began, less head_overlap), so its pages carry
    that much more and the polls that find nothing stop taking the backlog's calls."""
    behind = now - stream.lower[0]
    return behind > config.group_gap or behind >= config.backlog_fresh_every + config.head_overlap


def plan_settles(cursors: Sequence[LogCursor], now: datetime,
                 config: FollowConfig) -> list[_Stream]:
    """The settle reads up to `late_window` ago, most behind group first."""
    upper = now - config.late_window
    settling = [c for c in cursors if _wants_settle(c, upper, config)]
    return _groups(SETTLE, settling, lambda c: (c.settled_at, c.settled_insert_id), upper,
                   config)


def _settle_overdue(cursors: Iterable[LogCursor], now: datetime, config: FollowConfig) -> bool:
    upper = now - config.late_window
    return any(upper - c.settled_at > SETTLE_OVERDUE * config.settle_every
               and c.head_at - c.settled_at > SETTLE_OVERDUE * config.settle_every
               for c in cursors)


def _wants_head(cursor: LogCursor, config: FollowConfig) -> bool:
    end = _end(cursor, config)
    return end is None or cursor.head_at < end


def _wants_settle(cursor: LogCursor, upper: datetime, config: FollowConfig) -> bool:
    if cursor.settled_at >= upper:
        return False
    if upper - cursor.settled_at >= config.settle_every:
        return True
    # An ended attempt settles as soon as it can, so it stops being followed.
    end = _end(cursor, config)
    return end is not None and end <= upper


def _groups(kind: str, cursors: Sequence[LogCursor], position: _Reader,
            upper: datetime | None, config: FollowConfig,
            now: datetime | None = None) -> list[_Stream]:
    """Attempts in position order, cut where the filter would be too long or where the next
    one is more than group_gap ahead of the group's first (its lower bound).

    An attempt more than group_gap behind the present (upper, or now) is catching up: its
    pages are full, so sharing a query with one at another position would fill them with
    entries the one ahead has stored already. It joins only attempts at its very position,
    which are those read in one query before (a read moves all its members together), so a
    backlog keeps the same groups from sweep to sweep and every page but its last is new;
    more of them than one filter holds are cut into groups of even sizes."""
    streams: list[_Stream] = []
    ordered = sorted(cursors, key=lambda c: (position(c), c.pk))
    present = upper or now
    members: list[LogCursor] = []
    used = budget = 0
    most = len(ordered)
    for i, cursor in enumerate(ordered):
        cost = len(filters.term(cursor.attempt.vertex_job_id)) + 4
        at = position(cursor)
        behind = present is not None and present - at[0] > config.group_gap
        if members and (used + cost > budget or len(members) >= most
                        or at[0] - position(members[0])[0] > config.group_gap
                        or (behind and at != position(members[-1]))):
            streams.append(_stream(kind, members, position, upper))
            members = []
        if not members:
            # The same room for job ids whatever the position's insertId (up to a long one),
            # so a backlog is cut into the same groups at every sweep.
            budget, used = min(filters.budget_for(at[0], upper, at[1]),
                               filters.budget_for(at[0], upper, _LONG_INSERT_ID)) + 4, 0
            most = _even_share(ordered, i, position, budget - 4) if behind else len(ordered)
        members.append(cursor)
        used += cost
    if members:
        streams.append(_stream(kind, members, position, upper))
    return streams


def _even_share(ordered: Sequence[LogCursor], first: int, position: _Reader,
                room: int) -> int:
    """How many of the attempts at ordered[first]'s position (the rest of its group) go in
    each query: as few queries as the filter's room allows, of even sizes. Read a page each
    in turn, even groups come to their ends together, so none is left caught up and polled
    for nothing while the others still read their backlogs."""
    at = position(ordered[first])
    ids = []
    for cursor in ordered[first:]:
        if position(cursor) != at:
            break
        ids.append(cursor.attempt.vertex_job_id)
    return -(-len(ids) // len(filters.pack(ids, room)))


def _stream(kind: str, members: list[LogCursor], position: _Reader,
            upper: datetime | None) -> _Stream:
    lower = min(position(c) for c in members)
    query = filters.query(sorted(c.attempt.vertex_job_id for c in members), lower[0], upper,
                          lower[1])
    return _Stream(kind, members, lower, upper, query)


# --- cursors ----------------------------------------------------------------------------------

def advance(stream: _Stream, page: LogPage, config: FollowConfig) -> None:
    """Move the members' cursors past what this page proved is stored."""
    assert stream.started is not None
    last = page.entries[-1] if page.entries else None
    if not stream.done and last is None:
        return  # an empty page with a token: nothing learnt yet
    # Where the read got to: the last entry (everything up to it is stored), or, read to its
    # end, the start of the instant the query was made (or its upper bound).
    reached: Position | None = (last.timestamp, last.insert_id) if last else None
    changes: dict[tuple[datetime, str, datetime, str], list[int]] = defaultdict(list)
    for cursor in stream.members:
        head: Position = (cursor.head_at, cursor.head_insert_id)
        settled: Position = (cursor.settled_at, cursor.settled_insert_id)
        if stream.kind == HEAD:
            head = max(head, (stream.started - config.head_overlap, "") if stream.done
                       else reached or head)
            # Read from below its settled position: what this read covered is settled too,
            # up to where nothing can arrive late any more (a backlog is not read twice).
            if settled >= stream.lower:
                limit: Position = (stream.started - config.late_window, "")
                settled = max(settled, limit if stream.done else min(reached or settled, limit))
        else:
            assert stream.upper is not None
            settled = max(settled, (stream.upper, "") if stream.done else reached or settled)
            head = max(head, settled)
        if (head, settled) != ((cursor.head_at, cursor.head_insert_id),
                               (cursor.settled_at, cursor.settled_insert_id)):
            cursor.head_at, cursor.head_insert_id = head
            cursor.settled_at, cursor.settled_insert_id = settled
            changes[(*head, *settled)].append(cursor.pk)
    for (head_at, head_id, settled_at, settled_id), pks in changes.items():
        LogCursor.objects.filter(pk__in=pks).update(
            head_at=head_at, head_insert_id=head_id, settled_at=settled_at,
            settled_insert_id=settled_id, updated_at=timezone.now())
