"""TailLogEntries mode against the emulator's streaming API, with the list sweeps settling."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.core.management import call_command
from django.utils import timezone

from controlplane.backends.training import VertexBackend
from controlplane.logs import follower
from controlplane.logs.models import LogLine
from controlplane.logs.options import FollowConfig
from controlplane.logs.store import Target
from controlplane.logs.tail import TailFollower
from tests.logs.conftest import AttemptFactory
from tests.logs.helpers import Line, write
from tests.logs.test_follower import FAST, Clock

TAIL = replace(FAST, tail=True, tail_buffer_window_s=0.2)


def wait_until(predicate: Any, timeout: float = 30.0) -> None:
    """Wait for something to happen (how fast is for the benchmarks, not asserted here)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not seen within {timeout} s")
        time.sleep(0.05)


def lines_of(attempt: Any) -> int:
    return LogLine.objects.filter(job_id=attempt.job_id).count()


def test_tail_streams_new_entries_and_reopens_when_jobs_change(
        committed_vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any) -> None:
    now = timezone.now()
    first = make_attempt(now - timedelta(minutes=1))
    followed = {first.vertex_job_id: Target(first.job_id, 1)}
    tail = TailFollower(committed_vertex, TAIL, lambda: dict(followed))
    try:
        tail.refresh()
        write(log_emulator.logs, [Line(first.vertex_job_id, f"t{i}", timezone.now(),
                                       text=f"live {i}") for i in range(20)])
        wait_until(lambda: lines_of(first) == 20)
        # A second job starts: new sessions cover both before the old one closes.
        second = make_attempt(now)
        followed[second.vertex_job_id] = Target(second.job_id, 1)
        tail.refresh()
        assert tail.stats.sessions_opened == 2
        write(log_emulator.logs, [Line(j.vertex_job_id, f"u{i}", timezone.now(),
                                       text=f"more {i}") for i in range(5)
                                  for j in (first, second)])
        wait_until(lambda: lines_of(first) == 25 and lines_of(second) == 5)
        tail.refresh()  # nothing changed: nothing reopened
        assert tail.stats.sessions_opened == 2 and tail.stats.errors == 0
    finally:
        tail.close()


def test_what_the_stream_missed_is_found_by_the_settle_sweep(
        committed_vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any) -> None:
    now = timezone.now()
    attempt = make_attempt(now - timedelta(minutes=5))
    # Written while no session was open (before the tail started, or while it reopened).
    write(log_emulator.logs, [Line(attempt.vertex_job_id, f"m{i}",
                                   now - timedelta(minutes=2, seconds=i), text=f"missed {i}")
                              for i in range(30)])
    stats = follower.follow(committed_vertex, TAIL, Clock(now))
    assert stats.caught_up and lines_of(attempt) == 30


def test_follow_logs_command_runs_a_sweep(committed_vertex: VertexBackend,
                                          make_attempt: AttemptFactory, log_emulator: Any,
                                          settings: Any) -> None:
    now = timezone.now()
    attempt = make_attempt(now - timedelta(minutes=5))
    write(log_emulator.logs, [Line(attempt.vertex_job_id, f"c{i}", now - timedelta(seconds=i),
                                   text=f"command {i}") for i in range(10)])
    settings.CP_LOG_READS_PER_MINUTE = 1000
    call_command("follow_logs", "--once", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert lines_of(attempt) == 10


def test_config_reads_settings_over_defaults(settings: Any) -> None:
    settings.CP_LOG_TAIL = True
    settings.CP_LOG_READS_PER_MINUTE = 40
    from controlplane.logs.options import follow_config

    config = follow_config()
    assert config.tail and config.reads_per_minute == 40
    assert isinstance(config, FollowConfig) and config.page_size == 1000


def test_more_jobs_than_sessions_are_tailed_by_one_project_wide_session(
        committed_vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any,
        monkeypatch: Any) -> None:
    from controlplane.logs import tail as tail_module

    # Two filters of ids where one session is allowed: 600 ids do not fit in 20,000 characters.
    monkeypatch.setattr(tail_module, "MAX_SESSIONS", 1)
    now = timezone.now()
    first = make_attempt(now - timedelta(minutes=1))
    elsewhere = {str(10**18 + i): Target(first.job_id, 1) for i in range(600)}
    followed = {**elsewhere, first.vertex_job_id: Target(first.job_id, 1)}
    tail = TailFollower(committed_vertex, TAIL, lambda: dict(followed))
    try:
        tail.refresh()
        assert tail.stats.sessions_opened == 1
        # A Vertex job of the project that is not followed: read by the session, not stored.
        write(log_emulator.logs, [Line("4242424242", f"x{i}", timezone.now(), text=f"not ours {i}")
                                  for i in range(5)]
              + [Line(first.vertex_job_id, f"t{i}", timezone.now(), text=f"live {i}")
                 for i in range(10)])
        wait_until(lambda: lines_of(first) == 10)
        # A job starts: the open session routes its entries from the next refresh, unreopened.
        second = make_attempt(now)
        followed[second.vertex_job_id] = Target(second.job_id, 1)
        tail.refresh()
        assert tail.stats.sessions_opened == 1
        write(log_emulator.logs, [Line(second.vertex_job_id, f"u{i}", timezone.now(),
                                       text=f"second {i}") for i in range(7)])
        wait_until(lambda: lines_of(second) == 7)
        # Back under the limit: sessions by ids again, the wide one closed after they opened.
        for key in elsewhere:
            del followed[key]
        tail.refresh()
        assert tail.stats.sessions_opened == 2 and len(tail._sessions) == 1
        write(log_emulator.logs, [Line(j.vertex_job_id, f"v{i}", timezone.now(), text=f"by id {i}")
                                  for i in range(3) for j in (first, second)])
        wait_until(lambda: lines_of(first) == 13 and lines_of(second) == 10)
        assert LogLine.objects.count() == 23 and tail.stats.errors == 0
    finally:
        tail.close()
