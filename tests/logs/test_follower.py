"""The follower against the real emulator over gRPC, through VertexBackend's GAPIC clients.

Time is the follower's clock, moved by the tests; entries carry the timestamps the tests give
them, so "late" means exactly what it means on Cloud Logging: written after the follower has
read past its timestamp.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane.backends.training import VertexBackend
from controlplane.logs import follower
from controlplane.logs.models import LogCursor, LogLine, StepMetric
from controlplane.logs.options import FollowConfig
from controlplane.runs.models import Job, JobAttempt
from tests.logs.conftest import AttemptFactory
from tests.logs.helpers import Line, write
from vertexplan.logparse import filters

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# No budget limit here: the quota has tests of its own. A sweep never gives up on time.
FAST = FollowConfig(reads_per_minute=1_000_000, burst=1_000_000, sweep_seconds=600)


class Killed(BaseException):
    """The follower's process dying: not an Exception, so nothing in it can catch it."""


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


class Crashing:
    """The real backend, except that the process dies before some calls."""

    def __init__(self, backend: VertexBackend, rng: random.Random, p: float) -> None:
        self.backend, self.rng, self.p = backend, rng, p
        self.project = backend.project

    def list_log_entries(self, *args: Any, **kwargs: Any) -> Any:
        if self.rng.random() < self.p:
            raise Killed("killed before the call")
        return self.backend.list_log_entries(*args, **kwargs)


def sweep_until_caught_up(backend: Any, clock: Clock, config: FollowConfig = FAST,
                          limit: int = 500) -> int:
    """Run sweeps, restarting after every kill, until one reads everything. Returns kills."""
    kills = 0
    for _ in range(limit):
        try:
            if follower.follow(backend, config, clock).caught_up:
                return kills
        except Killed:
            kills += 1
    raise AssertionError("the follower never caught up")


def test_100k_lines_over_20_jobs_none_lost_none_twice_across_restarts(
        committed_vertex: VertexBackend, make_attempt: AttemptFactory,
        monkeypatch: pytest.MonkeyPatch, log_emulator: Any) -> None:
    rng = random.Random(20260302)
    attempts = [make_attempt(T0 - timedelta(minutes=1), name=f"job-{n}") for n in range(20)]
    ids = [a.vertex_job_id for a in attempts]
    # Kills inside the transaction that stores a page, after its rows and cursors are written.
    real_advance = follower.advance

    def advance_then_maybe_die(*args: Any) -> None:
        real_advance(*args)
        if rng.random() < 0.15:
            raise Killed("killed before the commit")

    monkeypatch.setattr(follower, "advance", advance_then_maybe_die)
    backend = Crashing(committed_vertex, rng, p=0.15)
    clock = Clock(T0)
    expected: dict[str, set[str]] = defaultdict(set)
    steps: Counter[str] = Counter()
    late: list[tuple[str, str]] = []
    kills = 0
    for r in range(20):
        window = T0 + timedelta(seconds=10 * r)
        lines = []
        for i in range(5000):
            job = ids[i % 20]
            insert_id = f"r{r:02d}-{i:05d}"
            is_step = (i // 20) % 10 == 0  # every tenth line of each job
            if r >= 1 and i % 50 == 7 and not is_step:
                # Late: timestamped in the previous window, which the fresh reads have passed.
                at = window - timedelta(seconds=10) + timedelta(milliseconds=rng.randrange(7500))
                late.append((job, insert_id))
            elif r == 5 and i < 1500:
                at = window  # 1500 entries at one instant: a tie across page boundaries
            else:
                # Three entries per millisecond: pages of 1000 split ties.
                at = window + timedelta(milliseconds=2 * (i // 3))
            if is_step:
                steps[job] += 1
                line = Line(job, insert_id, at, json={
                    "event": "step", "message": f"step {steps[job]}", "step": steps[job],
                    "total_steps": 1000, "loss": 5.0 / steps[job], "lr": 1e-3,
                    "tokens_per_s": 1000.0, "step_time_s": 0.1})
            else:
                line = Line(job, insert_id, at, text=f"{job} line {r}-{i}",
                            task="workerpool0-0" if i % 3 else "workerpool1-0")
            lines.append(line)
            expected[job].add(insert_id)
        rng.shuffle(lines)  # arrival order is not timestamp order
        write(log_emulator.logs, lines)
        clock.at = window + timedelta(seconds=10)
        kills += sweep_until_caught_up(backend, clock)
        if r == 10:
            # The fresh reads had passed them: those not yet stored wait for the settle pass.
            stored = set(LogLine.objects.filter(insert_id__startswith="r10-")
                         .values_list("insert_id", flat=True))
            assert any(i not in stored for j, i in late if i.startswith("r10-"))

    # Time passes beyond the late window: everything settles.
    clock.at = T0 + timedelta(minutes=10)
    kills += sweep_until_caught_up(backend, clock)
    assert kills > 20, "the follower was restarted many times"

    by_job = {a.vertex_job_id: a.job_id for a in attempts}
    rows = list(LogLine.objects.values_list("job_id", "insert_id"))
    assert len(rows) == 100_000 == sum(len(v) for v in expected.values())
    assert set(rows) == {(by_job[j], i) for j, ids_ in expected.items() for i in ids_}
    assert len(late) > 1000
    assert StepMetric.objects.count() == sum(steps.values())
    for attempt in attempts:
        job = Job.objects.get(pk=attempt.job_id)
        assert job.last_step == steps[attempt.vertex_job_id] and job.total_steps == 1000
    assert all(c.settled_at >= T0 + timedelta(seconds=200) for c in LogCursor.objects.all())


def test_the_same_entries_read_again_are_stored_once(vertex: VertexBackend,
                                                     make_attempt: AttemptFactory,
                                                     log_emulator: Any) -> None:
    attempt = make_attempt(T0)
    write(log_emulator.logs, [Line(attempt.vertex_job_id, f"x{i}", T0 + timedelta(seconds=i),
                                   text=f"line {i}") for i in range(30)])
    clock = Clock(T0 + timedelta(minutes=5))
    sweep_until_caught_up(vertex, clock)
    # Rewind the cursor as a restored backup would: everything is read again.
    before = T0 - timedelta(minutes=1)
    LogCursor.objects.update(head_at=before, settled_at=before)
    stats = follower.follow(vertex, FAST, clock)
    assert stats.entries >= 30 and stats.new_lines == 0
    assert LogLine.objects.filter(job_id=attempt.job_id).count() == 30


def test_finished_attempt_is_followed_until_its_last_lines_are_in(
        vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any) -> None:
    ended = T0 + timedelta(seconds=60)
    attempt = make_attempt(T0, ended_at=ended)
    job = attempt.vertex_job_id
    write(log_emulator.logs, [Line(job, "a", T0 + timedelta(seconds=5), text="first")])
    clock = Clock(ended + timedelta(seconds=5))
    sweep_until_caught_up(vertex, clock)
    # The last line arrives after the job ended, late.
    write(log_emulator.logs, [Line(job, "z", ended - timedelta(seconds=1), text="last words")])
    clock.at = ended + timedelta(seconds=20)
    sweep_until_caught_up(vertex, clock)
    assert not LogCursor.objects.get(pk=attempt.pk).done
    clock.at = ended + timedelta(minutes=2)
    sweep_until_caught_up(vertex, clock)
    assert LogCursor.objects.get(pk=attempt.pk).done
    assert set(LogLine.objects.values_list("message", flat=True)) == {"first", "last words"}
    # Done: no more queries for it.
    assert follower.follow(vertex, FAST, clock).calls == 0


def test_an_attempt_seen_late_is_read_from_its_start_in_a_query_of_its_own(
        vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any) -> None:
    current = [make_attempt(T0) for _ in range(3)]
    clock = Clock(T0 + timedelta(minutes=30))
    write(log_emulator.logs, [Line(a.vertex_job_id, f"c{n}", clock.at - timedelta(seconds=1),
                                   text="now") for n, a in enumerate(current)])
    sweep_until_caught_up(vertex, clock)
    # A job whose CustomJob was created half an hour ago, recorded only now.
    old = make_attempt(T0 + timedelta(minutes=1))
    write(log_emulator.logs, [Line(old.vertex_job_id, f"o{i}", T0 + timedelta(minutes=2, seconds=i),
                                   text=f"old {i}") for i in range(50)])
    cursors = follower.open_cursors(vertex.project, clock.at, FAST)
    heads = follower.plan_heads(cursors, FAST)
    assert sorted(len(s.members) for s in heads) == [1, 3]
    lone = next(s for s in heads if len(s.members) == 1)
    assert old.vertex_job_id in lone.query and lone.lower[0] < T0 + timedelta(minutes=1)
    stats = follower.follow(vertex, FAST, clock)
    assert stats.caught_up
    assert LogLine.objects.filter(job_id=old.job_id).count() == 50
    # Read once: the backlog was older than the late window, so it is settled already.
    assert LogCursor.objects.get(pk=old.pk).settled_at >= clock.at - FAST.late_window


def test_many_jobs_share_as_few_queries_as_the_filter_limit_allows(
        vertex: VertexBackend, make_attempt: AttemptFactory) -> None:
    first = make_attempt(T0)
    job = Job.objects.get(pk=first.job_id)
    attempts = [first, *JobAttempt.objects.bulk_create(
        JobAttempt(job=job, number=n, display_name=f"a{n}", vertex_job_id=str(8 * 10**18 + n),
                   created_at=T0, submitted_at=T0) for n in range(2, 1001))]
    cursors = follower.open_cursors(vertex.project, T0, FAST)
    heads = follower.plan_heads(cursors, FAST)
    assert sum(len(s.members) for s in heads) == 1000
    assert all(len(s.query) <= filters.MAX_FILTER_CHARS for s in heads)
    per_term = len(filters.term(attempts[0].vertex_job_id)) + len(" OR ")
    assert len(heads) == -(-1000 * per_term // (filters.MAX_FILTER_CHARS - 100))


class OneCallPerSweep:
    """The real backend, except that the process dies at the second call of every sweep: a
    follower that only ever gets one page in."""

    def __init__(self, backend: VertexBackend) -> None:
        self.backend, self.project, self.made = backend, backend.project, 0

    def list_log_entries(self, *args: Any, **kwargs: Any) -> Any:
        self.made += 1
        if self.made > 1:
            raise Killed("killed at the second call")
        return self.backend.list_log_entries(*args, **kwargs)


def test_more_entries_at_one_instant_than_a_page_are_passed_one_page_per_sweep(
        vertex: VertexBackend, make_attempt: AttemptFactory, log_emulator: Any) -> None:
    attempt = make_attempt(T0)
    write(log_emulator.logs, [Line(attempt.vertex_job_id, f"same-{i:05d}", T0,
                                   text=f"same instant {i}") for i in range(2500)])
    backend = OneCallPerSweep(vertex)
    clock = Clock(T0 + timedelta(seconds=1))
    sweeps = 0
    while True:
        sweeps += 1
        backend.made = 0
        try:
            follower.follow(backend, FAST, clock)
            break
        except Killed:
            assert sweeps < 10, "no progress past the instant"
    # Three pages, three sweeps: each started after the insertId the last one got to.
    assert sweeps == 3
    assert LogLine.objects.count() == 2500
