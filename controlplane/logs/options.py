"""The log follower's knobs, from Django settings or else the environment (same names).

Defaults follow Cloud Logging's limits (VERTEX_FACTS.md section 5): 60 entries.list calls a
minute per project, 1000 entries a page, 20,000 characters a filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings

from controlplane.core.env import envbool, envfloat, envint


def _int(name: str, default: int, minimum: int = 0) -> int:
    value = getattr(settings, name, None)
    return int(value) if value is not None else envint(name, default, minimum=minimum)


def _float(name: str, default: float, minimum: float = 0.0) -> float:
    value = getattr(settings, name, None)
    return float(value) if value is not None else envfloat(name, default, minimum=minimum)


def _bool(name: str, default: bool) -> bool:
    value = getattr(settings, name, None)
    return bool(value) if value is not None else envbool(name, default)


@dataclass(frozen=True)
class FollowConfig:
    # entries.list calls per project per minute we allow ourselves: the quota is 60 and
    # cannot be raised. The follower is the control plane's only reader; the 2 left are for
    # people reading the project's logs in Logs Explorer or with gcloud (a page each), and a
    # RESOURCE_EXHAUSTED when they read more pauses the follower (controlplane.logs.quota).
    # At 58 full pages a minute a backlog is read at 0.97x the quota's 1000 entries/s.
    reads_per_minute: int = 58
    # At most this many calls in one burst, so a backlog never spends a whole minute's budget
    # at once and leaves the next sweeps (the fresh reads) with nothing.
    burst: int = 8
    page_size: int = 1000
    # Entries can become visible this long after their timestamp; the settle pass re-reads
    # each stretch of time once, this long after it, to store the late ones.
    late_window: timedelta = timedelta(seconds=30)
    # Settle in chunks of at least this much time, so its pages are full.
    settle_every: timedelta = timedelta(seconds=15)
    # The fresh read re-reads this much before where the previous one started, for entries
    # that take a moment to become visible (the common case, not worth a settle delay).
    head_overlap: timedelta = timedelta(seconds=2)
    # Lower bound of an attempt's entries: its creation time minus clock skew.
    start_margin: timedelta = timedelta(seconds=10)
    # An attempt is followed until its settled position passes its end by this much.
    end_margin: timedelta = timedelta(seconds=30)
    # Attempts that ended longer ago than this when first seen are not read at all.
    max_backfill: timedelta = timedelta(days=1)
    # Attempts whose positions differ by more than this are queried separately, so one
    # job catching up does not make the others re-read its backlog.
    group_gap: timedelta = timedelta(seconds=30)
    # While some attempt is catching up (a backlog), the attempts already caught up are read
    # this often instead of at every sweep, so the quota goes to full pages.
    backlog_fresh_every: timedelta = timedelta(seconds=10)
    # A sweep reading a backlog waits for the budget's next call when it is at most this far
    # (the beat runs a sweep every 3 s); a longer wait, or a fresh read, ends the sweep.
    budget_nap_s: float = 3.0
    # A sweep stops after this long (the Celery task's lease is 120 s).
    sweep_seconds: float = 60.0
    # With TailLogEntries on, fresh entries arrive by stream; list calls only settle.
    tail: bool = False
    tail_buffer_window_s: float = 2.0


def follow_config() -> FollowConfig:
    page_size = _int("CP_LOG_PAGE_SIZE", 1000, minimum=1)
    return FollowConfig(
        reads_per_minute=_int("CP_LOG_READS_PER_MINUTE", 58, minimum=1),
        burst=_int("CP_LOG_READ_BURST", 8, minimum=1),
        page_size=min(page_size, 1000),
        late_window=timedelta(seconds=_float("CP_LOG_LATE_WINDOW_S", 30.0)),
        settle_every=timedelta(seconds=_float("CP_LOG_SETTLE_EVERY_S", 15.0)),
        head_overlap=timedelta(seconds=_float("CP_LOG_HEAD_OVERLAP_S", 2.0)),
        backlog_fresh_every=timedelta(seconds=_float("CP_LOG_BACKLOG_FRESH_EVERY_S", 10.0)),
        sweep_seconds=_float("CP_LOG_SWEEP_MAX_S", 60.0, minimum=1.0),
        tail=_bool("CP_LOG_TAIL", False),
        tail_buffer_window_s=_float("CP_LOG_TAIL_BUFFER_S", 2.0),
    )


@dataclass(frozen=True)
class RetentionConfig:
    days: int = 30
    max_lines_per_job: int = 2_000_000
    metric_points: int = 20_000


def retention_config() -> RetentionConfig:
    return RetentionConfig(
        days=_int("CP_LOG_RETENTION_DAYS", 30, minimum=1),
        max_lines_per_job=_int("CP_LOG_MAX_LINES_PER_JOB", 2_000_000, minimum=1000),
        metric_points=_int("CP_METRIC_POINTS", 20_000, minimum=100),
    )
