"""The read budget: under the project's quota with headroom, steady, and backing off when
Cloud Logging says RESOURCE_EXHAUSTED (the emulator enforces the real per-minute quota)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from controlplane.backends import base
from controlplane.logs import follower
from controlplane.logs.models import LogLine, LogReadQuota
from controlplane.logs.options import FollowConfig
from controlplane.logs.quota import ReadBudget
from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess
from tests.logs.conftest import AttemptFactory, use_emulator
from tests.logs.helpers import Line, write
from tests.logs.test_follower import T0, Clock


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def quota_emulator(tmp_path: Path, settings: Any, postgres_url: str,
                   db: None) -> Iterator[EmulatorProcess]:
    """An emulator allowing 6 entries.list calls a minute."""
    emu = EmulatorProcess(tmp_path / "quota", [*FAST_FLAGS, "--logging-quota-per-minute", "6",
                                                  "--accept-job-log-writes"])
    emu.start()
    use_emulator(settings, emu)
    yield emu
    base.get_backend.cache_clear()
    emu.stop()


def test_budget_allows_per_minute_in_any_window_and_bursts_of_burst(db: None) -> None:
    clock = FakeTime()
    budget = ReadBudget("p", per_minute=50, burst=8, clock=clock)
    made = 0
    while budget.wait_s() == 0:
        budget.spend()
        made += 1
    assert made == 8  # a burst, not the whole minute at once
    # Then one call per 60/50 s: the steady rate.
    assert budget.wait_s() == pytest.approx(1.2, abs=0.01)
    times = []
    for _ in range(200):
        clock.now += budget.wait_s()
        budget.spend()
        times.append(clock.now)
    # Never more than 50 in any 60 s.
    assert max(sum(1 for t in times if s <= t < s + 60) for s in times) <= 50
    budget.save()
    # Persisted: the next sweep (another process) sees the same calls.
    again = ReadBudget("p", per_minute=50, burst=8, clock=clock)
    assert again.wait_s() > 0 and again.calls_in_last_minute() == len(budget.calls)


def test_exhausted_pauses_longer_each_time_and_success_resets(db: None) -> None:
    clock = FakeTime()
    budget = ReadBudget("p", per_minute=50, burst=8, clock=clock)
    first = budget.exhausted()
    assert 4 <= first <= 6 and budget.wait_s() == pytest.approx(first)
    second = budget.exhausted()
    assert second > first
    clock.now += 200
    assert budget.wait_s() == 0
    budget.succeeded()
    budget.save()
    row = LogReadQuota.objects.get(project="p")
    assert row.backoff_s == 0 and row.paused_until is None


def test_follower_stays_within_its_budget_and_never_hits_the_quota(
        quota_emulator: EmulatorProcess, make_attempt: AttemptFactory) -> None:
    attempt = make_attempt(T0)
    write(quota_emulator.logs, [Line(attempt.vertex_job_id, f"q{i}",
                                     T0 + timedelta(milliseconds=i), text=f"{i}")
                                for i in range(2500)])
    config = FollowConfig(reads_per_minute=5, burst=5, page_size=500)
    backend = base.get_backend()
    clock = Clock(T0 + timedelta(minutes=5))
    calls = [follower.follow(backend, config, clock) for _ in range(10)]
    assert sum(s.calls for s in calls) == 5  # the budget, not the emulator, stopped it
    assert sum(s.quota_errors for s in calls) == 0
    assert calls[-1].wait_s > 0 and not calls[-1].caught_up
    assert LogLine.objects.count() == 2500


def test_follower_backs_off_on_resource_exhausted_and_loses_nothing(
        quota_emulator: EmulatorProcess, make_attempt: AttemptFactory) -> None:
    attempt = make_attempt(T0)
    write(quota_emulator.logs, [Line(attempt.vertex_job_id, f"q{i}",
                                     T0 + timedelta(milliseconds=i), text=f"{i}")
                                for i in range(4000)])
    # Someone else (a person in the console) already used 4 of the project's 6 calls.
    for _ in range(4):
        quota_emulator.logs.list_log_entries(
            request={"resource_names": ["projects/test-project"], "page_size": 1})
    config = FollowConfig(reads_per_minute=50, burst=50, page_size=1000)
    backend = base.get_backend()
    clock = Clock(T0 + timedelta(minutes=5))
    stats = follower.follow(backend, config, clock)
    assert stats.calls == 3 and stats.quota_errors == 1
    row = LogReadQuota.objects.get(project=backend.project)
    assert row.paused_until is not None and row.backoff_s >= 5
    # Paused: the next sweep asks nothing.
    assert follower.follow(backend, config, clock).calls == 0
    assert LogLine.objects.count() == 2000  # the two pages read before the refusal


def test_a_call_leaves_the_window_a_moment_after_its_minute(db: None) -> None:
    # The server notes a call when it arrives; one made the instant the oldest leaves our
    # minute could land in the server's minute with it.
    clock = FakeTime()
    budget = ReadBudget("p", per_minute=5, burst=5, clock=clock)
    for _ in range(5):
        budget.spend()
    clock.now += 60
    assert budget.wait_s() > 0
    clock.now += budget.wait_s()
    assert budget.wait_s() == 0
