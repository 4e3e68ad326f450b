"""Is a running job stuck, or is one of its ranks slow? Pure decisions, no Django.

A distributed job that hangs (a collective waiting on a dead peer, a deadlocked data loader)
keeps its accelerators busy and stays RUNNING; PyTorch's NCCL watchdog waits 30 minutes by
default. Here a job's own step events say how long it normally takes between two of them:

    expected_interval(times)   the p95 of the intervals between its newest step events
    hang_verdict(...)          silent past max(k x p95, floor)? (not while it evaluates or
                               saves a checkpoint: those phases are expected to be quiet;
                               before its first steps: past the start-up allowance its
                               shape, StartupShape, calls for)
    straggler_verdict(...)     a rank slower than the median of its peers by more than a
                               ratio in every one of the newest M per-rank reports

The control plane calls them from its periodic sweep (controlplane/logs/health.py); the bench
(bench/hang_detection.py) runs them over simulated timelines.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vertexplan.summaries import pool_summaries

OK = "ok"
SUSPECTED_HANG = "suspected_hang"
STRAGGLER = "straggler"
HEALTH_CHOICES = (OK, SUSPECTED_HANG, STRAGGLER)

# Phases in which a trainer prints no step for a while on purpose (the `phase` event's names).
QUIET_PHASES = frozenset({"eval", "checkpoint_save"})
# How many of the newest step intervals the expectation is learned from.
INTERVALS_KEPT = 50

# Before its first steps a job pulls its image, starts its processes, joins them, loads
# weights or a checkpoint and compiles: silence is expected for as long as that takes, which
# depends on the job's shape (StartupShape). The allowance is STARTUP_MARGIN times the
# expected start-up, and at least the team's floor. The figures are deliberately generous
# estimates (a hang in start-up, e.g. in NCCL's initialisation, is still caught well before
# the 30 minutes of PyTorch's watchdog for an ordinary job; a false alarm costs a restart):
# - STARTUP_BASE_S: the container's start, Python and the framework's imports, building the
#   model, the first batch (what every job pays; tens of seconds on a loaded VM).
STARTUP_BASE_S = 60.0
# - the image pull, counted from the job's RUNNING state (the replicas pull after their VM is
#   up): ~100 MB/s from Artifact Registry in the region, unpacking included; an image whose
#   size is not known counts as a CUDA + PyTorch training image (~8 GB compressed layers
#   unpack to more; Google's prebuilt PyTorch GPU images are of that order).
IMAGE_PULL_BYTES_PER_S = 100e6
DEFAULT_IMAGE_BYTES = 8_000_000_000
# - joining: every replica must be up before the process group forms, and NCCL's set-up grows
#   with the log of the machines (rings and trees): this much per doubling of replicas.
RENDEZVOUS_S_PER_DOUBLING = 15.0
# - compiling the first step (torch.compile, XLA on TPU, jit): minutes for a large model.
COMPILE_S = 300.0
# - reading the checkpoint a resumed run starts from (GCS through gcsfuse or the client: ~200
#   MB/s for one reader; a sharded checkpoint read by every rank is faster, not counted).
RESTORE_BYTES_PER_S = 200e6
STARTUP_MARGIN = 3.0


@dataclass(frozen=True)
class StartupShape:
    """What a job's start-up must do before its first step (the control plane reads it from
    the job: its worker pools, image, arguments and the checkpoint it resumes from)."""

    replicas: int = 1              # machines that must all come up and join
    image_bytes: int | None = None  # the container image (None: DEFAULT_IMAGE_BYTES)
    compiles: bool = False         # its first step compiles (--compile-blocks, TPU, JAX/XLA)
    restore_bytes: int = 0         # the checkpoint it resumes from

    def expected_s(self) -> float:
        """How long its start-up should take, by the figures above."""
        image = DEFAULT_IMAGE_BYTES if self.image_bytes is None else self.image_bytes
        return (STARTUP_BASE_S + image / IMAGE_PULL_BYTES_PER_S
                + RENDEZVOUS_S_PER_DOUBLING * math.ceil(math.log2(max(self.replicas, 1)))
                + (COMPILE_S if self.compiles else 0.0)
                + max(self.restore_bytes, 0) / RESTORE_BYTES_PER_S)


@dataclass(frozen=True)
class HangPolicy:
    """A team's hang rule: silent for max(k x p95 step interval, floor_s) is a suspected hang.

    `startup_s`: the silence allowed before a job has two steps to learn from, where given;
    0 (the default): derived from the job's shape (startup_allowance_s).
    `quiet_phase_cap_s`: a phase that may be quiet (eval, checkpoint save) still ends; past
    this long in one, the job is judged as if it were not in it."""

    k: float = 10.0
    floor_s: float = 300.0
    startup_s: float = 0.0
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


# What in a replica's command line says its first step compiles: the PyTorch trainer's
# --compile-blocks (or its --set form), and the trainers that always compile (JAX's jit,
# PyTorch/XLA's graphs).
_COMPILING_WORDS = ("--compile-blocks", "compile_blocks=true", "trainers.jax", "trainers.xla")


def startup_shape(custom_job: Mapping[str, Any] | None,
                  restore_bytes: int = 0) -> StartupShape:
    """A CustomJob's start-up shape (REST JSON, as the control plane stores it): its replicas
    over every pool, whether it compiles (the words above in any pool's command or args, or a
    TPU pool: XLA compiles), and RESTORE_BYTES (its checkpoint's, when it resumes). Its
    image's size is not in the job: the default counts."""
    pools = pool_summaries(dict(custom_job) if custom_job else None)
    specs = ((custom_job or {}).get("jobSpec") or {}).get("workerPoolSpecs") or []
    words = " ".join(str(word).lower() for spec in specs if spec
                     for part in ("command", "args")
                     for word in ((spec.get("containerSpec") or {}).get(part) or []))
    tpu = any(p.tpu_topology or p.accelerator_type.upper().startswith("TPU") for p in pools)
    return StartupShape(
        replicas=sum(p.replicas for p in pools) or 1,
        compiles=tpu or any(w in words for w in _COMPILING_WORDS),
        restore_bytes=max(restore_bytes, 0))


def startup_allowance_s(shape: StartupShape, policy: HangPolicy) -> float:
    """The silence allowed before a job's first steps: the policy's own startup_s where set,
    else STARTUP_MARGIN x its shape's expected start-up; never under the floor."""
    if policy.startup_s > 0:
        return max(policy.startup_s, policy.floor_s)
    return max(STARTUP_MARGIN * shape.expected_s(), policy.floor_s)


def threshold_s(p95_s: float | None, policy: HangPolicy,
                startup: StartupShape = StartupShape()) -> float:
    """How long a job may go without a step: max(k x p95, floor), or the start-up allowance
    (startup_allowance_s) before it has two steps to learn from."""
    if p95_s is None:
        return startup_allowance_s(startup, policy)
    return max(policy.k * p95_s, policy.floor_s)


def hang_verdict(*, now: float, running_since: float, step_times: Sequence[float],
                 last_activity: float | None = None,
                 quiet_phase: tuple[str, float] | None = None,
                 policy: HangPolicy = HangPolicy(),
                 startup: StartupShape = StartupShape()) -> HangVerdict:
    """Whether a RUNNING job is suspected to hang at `now` (epoch seconds throughout).

    `running_since`: when its current run started (the attempt running, or its trainer started
    again after a restart in place): until two steps follow it, the job gets the start-up
    allowance; `step_times`: its newest step events' times (earlier runs' too: the interval is
    learned from them); `last_activity`: the newest other sign of progress (an eval, a
    checkpoint saved, a phase that ended); `quiet_phase`: (name, since) of a phase the trainer
    said it began and has not ended; `startup`: the job's shape, for the start-up allowance."""
    p95 = expected_interval(step_times)
    starting = sum(1 for t in step_times if t >= running_since) < 2
    limit = threshold_s(None if starting else p95, policy, startup)
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
    """A rank slower than `ratio` x the median of its report, and by more than `min_excess_s`,
    in each of the newest `reports` per-rank reports (a trainer reports every few steps) is
    named. The floor is for host-side times of a few milliseconds (a JAX host's dispatch, a
    GPU rank's launch time): there scheduler jitter alone makes one host 3-5x another in an
    even run (measured on the JAX and PyTorch/XLA trainers' two-host runs), and 20 ms a step
    is not a slowdown worth a page's warning."""

    ratio: float = 1.3
    reports: int = 3
    min_excess_s: float = 0.02


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
            if report[rank] - median <= policy.min_excess_s:
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
