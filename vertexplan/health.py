"""Is a running job stuck, or is one of its ranks slow? Pure decisions, no Django.

A distributed job that hangs (a collective waiting on a dead peer, a deadlocked data loader)
keeps its accelerators busy and stays RUNNING; PyTorch's NCCL watchdog waits 30 minutes by
default. Here a job's own step events say how long it normally takes between two of them:

    expected_interval(times)   the p95 of the intervals between its newest step events
    hang_verdict(...)          silent past max(k x p95, floor)? (not while it evaluates or
                               saves a checkpoint: those phases are expected to be quiet)
    straggler_verdict(...)     a rank slower than the median of its peers by more than a
                               ratio in every one of the newest M per-rank reports

The control plane calls them from its periodic sweep (controlplane/logs/health.py); the bench
(bench/hang_detection.py) runs them over simulated timelines.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

OK = "ok"
SUSPECTED_HANG = "suspected_hang"
STRAGGLER = "straggler"
HEALTH_CHOICES = (OK, SUSPECTED_HANG, STRAGGLER)

# Phases in which a trainer prints no step for a while on purpose (the `phase` event's names).
QUIET_PHASES = frozenset({"eval", "checkpoint_save"})
# How many of the newest step intervals the expectation is learned from.
INTERVALS_KEPT = 50
# Before its first steps a job loads data and weights, builds and compiles its model: it gets
# this many floors of silence, and at least HangPolicy.startup_s (a large model's start-up
# takes minutes; a hang there, e.g. in NCCL's initialisation, is still caught well before the
# 30 minutes of PyTorch's watchdog).
STARTUP_FLOORS = 2


@dataclass(frozen=True)
class HangPolicy:
    """A team's hang rule: silent for max(k x p95 step interval, floor_s) is a suspected hang.

    `startup_s`: the least silence allowed before a job has two steps to learn from.
    `quiet_phase_cap_s`: a phase that may be quiet (eval, checkpoint save) still ends; past
    this long in one, the job is judged as if it were not in it."""

    k: float = 10.0
    floor_s: float = 300.0
    startup_s: float = 900.0
    quiet_phase_cap_s: float = 7200.0


@dataclass(frozen=True)
class HangVerdict:
    hung: bool
    silent_s: float              # since the job last printed progress
    threshold_s: float           # how long it may be silent
    p95_s: float | None          # the learned step interval (None: no two steps yet)
    why: str


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def expected_interval(step_times: Sequence[float], kept: int = INTERVALS_KEPT) -> float | None:
    """The p95 of the intervals between the newest `kept` + 1 step events (epoch seconds, any
    order; a step printed twice counts once). None with fewer than two."""
    times = sorted(set(step_times))[-(kept + 1):]
    intervals = [b - a for a, b in itertools.pairwise(times)]
    return percentile(intervals, 95) if intervals else None


def threshold_s(p95_s: float | None, policy: HangPolicy) -> float:
    """How long a job may go without a step: max(k x p95, floor), or the start-up allowance
    (STARTUP_FLOORS floors, at least startup_s) before it has two steps to learn from."""
    if p95_s is None:
        return max(STARTUP_FLOORS * policy.floor_s, policy.startup_s)
    return max(policy.k * p95_s, policy.floor_s)


def hang_verdict(*, now: float, running_since: float, step_times: Sequence[float],
                 last_activity: float | None = None,
                 quiet_phase: tuple[str, float] | None = None,
                 policy: HangPolicy = HangPolicy()) -> HangVerdict:
    """Whether a RUNNING job is suspected to hang at `now` (epoch seconds throughout).

    `running_since`: when its current run started (the attempt running, or its trainer started
    again after a restart in place): until two steps follow it, the job gets the start-up
    allowance; `step_times`: its newest step events' times (earlier runs' too: the interval is
    learned from them); `last_activity`: the newest other sign of progress (an eval, a
    checkpoint saved, a phase that ended); `quiet_phase`: (name, since) of a phase the trainer
    said it began and has not ended."""
    p95 = expected_interval(step_times)
    starting = sum(1 for t in step_times if t >= running_since) < 2
    limit = threshold_s(None if starting else p95, policy)
    marks = [running_since, *step_times] + ([last_activity] if last_activity else [])
    since = max(marks)
    silent = max(now - since, 0.0)
    if quiet_phase is not None:
        name, began = quiet_phase
        if name in QUIET_PHASES and began >= since and now - began < policy.quiet_phase_cap_s:
            return HangVerdict(False, silent, limit, p95,
                               f"in its {name} phase for {now - began:.0f} s")
    if silent <= limit:
        return HangVerdict(False, silent, limit, p95, "printing progress")
    if starting:
        why = (f"no step for {silent:.0f} s since it started (limit {limit:.0f} s: the "
               "start-up allowance before its first steps)")
    else:
        why = (f"no step for {silent:.0f} s (limit {limit:.0f} s: the larger of "
               f"{policy.k:g} x the p95 step interval {p95:.1f} s and the "
               f"{policy.floor_s:.0f} s floor)")
    return HangVerdict(True, silent, limit, p95, why)


# --- stragglers ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class StragglerPolicy:
    """A rank slower than `ratio` x the median of its report in each of the newest `reports`
    per-rank reports (a trainer reports every few steps) is named."""

    ratio: float = 1.3
    reports: int = 3


@dataclass(frozen=True)
class StragglerVerdict:
    ranks: tuple[int, ...]           # the ranks named, slowest first; () = none
    slowdown: dict[int, float]       # rank -> its smallest ratio to the median over the reports
    why: str


def straggler_verdict(reports: Sequence[Sequence[float]],
                      policy: StragglerPolicy = StragglerPolicy()) -> StragglerVerdict:
    """The ranks persistently slower than their peers, from per-rank step times (one list per
    report, index = rank, oldest report first). Needs `policy.reports` reports of one world
    size and at least two ranks; a rank must be slow in every one of them, so one slow step
    (a checkpoint, a garbage collection) names nobody."""
    newest = [list(r) for r in reports[-policy.reports:]]
    if len(newest) < policy.reports or len({len(r) for r in newest}) != 1 or len(newest[0]) < 2:
        return StragglerVerdict((), {}, "not enough per-rank reports")
    ratios: dict[int, float] = {}
    for rank in range(len(newest[0])):
        worst_case = math.inf
        for report in newest:
            median = statistics.median(report)
            if median <= 0:
                worst_case = 0.0
                break
            worst_case = min(worst_case, report[rank] / median)
        ratios[rank] = worst_case
    named = tuple(sorted((r for r, x in ratios.items() if x > policy.ratio),
                         key=lambda r: -ratios[r]))
    if not named:
        return StragglerVerdict((), {}, "no rank slower than the others")
    slowdown = {r: round(ratios[r], 3) for r in named}
    words = ", ".join(f"rank {r} ({slowdown[r]:.2f}x the median)" for r in named)
    return StragglerVerdict(named, slowdown,
                            f"{words} in each of the last {policy.reports} reports")
