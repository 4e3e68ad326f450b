"""Goodput: where a job's accelerator time went, from the facts the control plane already keeps.

Pure: the caller (controlplane/costs/goodput.py) reads the job's attempts, restarts and events
and hands them over as a Timeline; the same facts always give the same split.

Every billed second of every attempt (Vertex bills from startTime to the end; the gap between
a replica's preemption notice and its restart is not billed, as vertexplan/pricing/actual.py
counts it) lands in exactly one category, so the categories add up to the billed time:

- productive: step time of steps that were not run before (rank 0's step events).
- program_startup: a job's first run, from its start to its first step (the first step's own
  time taken out); compile: the part of it (or of a step) a `phase` event says was compiling.
- restore: the same span of a run that resumed after a restart or from a checkpoint.
- replayed_steps: steps run again after a restart (steps since the checkpoint it resumed from,
  up to the furthest step reached before), at their measured time.
- lost_progress: what a disrupted run did after its last step event (the step in flight, the
  notice), and the steps after the last checkpoint of a run nothing resumed from.
- data_wait, checkpoint_save, eval: the seconds `phase` events report, taken out of the span
  they end in (a phase longer than that span, as a data wait summed over several step events
  is, takes the rest from the spans before it in the same run); without phase events, a
  `checkpoint_saved` event's `seconds`, and the part of a step interval holding an `eval`
  (or an unmeasured save) beyond the run's usual step time.
- hang: a step interval (or the time since the last step) holding a `suspected_hang` marker,
  beyond the usual step time; an attempt the hang ended (cancelled and resumed in a new
  attempt) is counted so up to its end.
- program_shutdown: a run that ended as asked (succeeded, cancelled), from its last step on.
- idle: 0 for a job; a team's month adds its persistent resources' time up with nothing on
  them (controlplane/clusters/idle_time.py, through controlplane/costs/goodput.py).
- other: what the events cannot split: a job that printed no step event at all.

Not billed, reported beside the bill: queued (created to provisioning), provisioning
(PENDING to startTime), and preempted_unbilled (preemption gaps, attempts a system failure
ended, which Vertex does not bill).

Exact for the product's trainers, which print `phase` events; approximate for other code
(documented per category above). Steps are rank 0's: a preemption of any replica ends the run
of every replica here (a distributed job restarts together), so preemption gaps are merged
over replicas. Time is in seconds of wall clock times the job's accelerator count (a job
without accelerators counts its replicas' machines).
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction

from contract.events import PHASES

PRODUCTIVE = "productive"
# In the order a page shows them: productive first, then the causes of badput, then what is
# not billed.
BILLED = (PRODUCTIVE, "program_startup", "compile", "restore", "data_wait", "checkpoint_save",
          "eval", "replayed_steps", "lost_progress", "hang", "program_shutdown", "idle",
          "other")
NOT_BILLED = ("queued", "provisioning", "preempted_unbilled")
CATEGORIES = BILLED + NOT_BILLED
# What a marker event may stand for when no phase event measured it.
MARKER_KINDS = ("checkpoint_saved", "eval", "suspected_hang")
_MARKER_CATEGORY = {"checkpoint_saved": "checkpoint_save", "eval": "eval",
                    "suspected_hang": "hang"}
assert set(PHASES) <= set(BILLED)


@dataclass(frozen=True)
class Attempt:
    number: int
    created_at: datetime
    pending_at: datetime | None    # when Vertex began provisioning (the PENDING state)
    started_at: datetime | None    # startTime: billing starts
    ended_at: datetime | None      # None while it runs
    billed: bool = True            # False: ended by a system failure Vertex does not bill
    resume_step: int | None = None  # the checkpoint step it was submitted to resume from
    disrupted: bool = False        # ended by a failure or preemption (not succeeded/cancelled)


@dataclass(frozen=True)
class Disruption:
    """A replica's run that ended and (usually) started over: a JobRestart."""

    attempt: int
    occurred_at: datetime
    resumed_at: datetime | None
    resumed_from_step: int | None = None
    step: int | None = None        # where the run was when it stopped


@dataclass(frozen=True)
class Step:
    attempt: int
    at: datetime
    step: int


@dataclass(frozen=True)
class Phase:
    attempt: int
    at: datetime       # when it ended (the event's time)
    phase: str         # one of contract.events.PHASES
    seconds: float


@dataclass(frozen=True)
class Marker:
    """A timeline event that stands for time when no phase event measured it."""

    attempt: int
    at: datetime
    kind: str                      # one of MARKER_KINDS, or "resumed"
    step: int | None = None
    seconds: float | None = None   # checkpoint_saved's own measure


@dataclass(frozen=True)
class Timeline:
    attempts: Sequence[Attempt]
    now: datetime
    accelerators: int = 1
    disruptions: Sequence[Disruption] = ()
    steps: Sequence[Step] = ()
    phases: Sequence[Phase] = ()
    markers: Sequence[Marker] = ()


@dataclass(frozen=True)
class Category:
    name: str
    accelerator_seconds: float
    billed: bool
    micros: int | None             # None without a price


@dataclass(frozen=True)
class Goodput:
    billed_accelerator_seconds: float
    categories: tuple[Category, ...]
    replayed_steps: int            # how many steps were run again after restarts
    step_seconds: float | None     # the measured time of one step (median), None unmeasured
    notes: tuple[str, ...] = field(default=())

    def seconds(self, name: str) -> float:
        return next(c.accelerator_seconds for c in self.categories if c.name == name)

    @property
    def fraction(self) -> float | None:
        """Productive over billed; None before anything was billed."""
        if self.billed_accelerator_seconds <= 0:
            return None
        return self.seconds(PRODUCTIVE) / self.billed_accelerator_seconds


def goodput(timeline: Timeline, micros_per_accelerator_second: Fraction | int | None = None
            ) -> Goodput:
    """Split the timeline's accelerator time into CATEGORIES (see the module docstring)."""
    split = _Split(timeline)
    for attempt in sorted(timeline.attempts, key=lambda a: a.number):
        split.attempt(attempt)
    split.unrecovered()
    accelerators = max(timeline.accelerators, 1)
    acc = {name: split.wall.get(name, 0.0) * accelerators for name in CATEGORIES}
    billed = sum(acc[name] for name in BILLED)
    micros = _share(acc, billed, micros_per_accelerator_second)
    return Goodput(
        billed_accelerator_seconds=billed,
        categories=tuple(Category(name, acc[name], name in BILLED,
                                  micros.get(name) if micros is not None else None)
                         for name in CATEGORIES),
        replayed_steps=split.replayed, step_seconds=split.unit,
        notes=tuple(dict.fromkeys(split.notes)))


def priced(split: Goodput, micros_per_accelerator_second: Fraction | int) -> Goodput:
    """SPLIT with its categories priced at the rate (see _share)."""
    acc = {c.name: c.accelerator_seconds for c in split.categories}
    micros = _share(acc, split.billed_accelerator_seconds, micros_per_accelerator_second)
    assert micros is not None
    return replace(split, categories=tuple(replace(c, micros=micros[c.name])
                                           for c in split.categories))


def _share(acc: dict[str, float], billed: float, rate: Fraction | int | None
           ) -> dict[str, int] | None:
    """Whole micro-dollars per category that add up to the bill's (largest remainder)."""
    if rate is None:
        return None
    rate = Fraction(rate)
    exact = {name: Fraction(acc[name]) * rate for name in BILLED}
    out = {name: int(value) for name, value in exact.items()}
    left = round(Fraction(billed) * rate) - sum(out.values())
    for name in sorted(BILLED, key=lambda n: exact[n] - out[n], reverse=True)[:max(left, 0)]:
        out[name] += 1
    out.update({name: 0 for name in NOT_BILLED})
    return out


@dataclass
class _Run:
    start: datetime
    end: datetime
    base: int                      # the step it starts after (its resume step, or 0)
    first: bool                    # the job's first run: its start-up is program_startup
    disrupted: bool                # ended by a preemption or failure
    active: bool                   # still running now
    stopped: int | None = None     # the step it stopped at (its steps after the notice)


class _Split:
    """The job's wall seconds per category, attempt after attempt, run after run."""

    def __init__(self, timeline: Timeline) -> None:
        self.t = timeline
        self.wall: dict[str, float] = {}
        self.notes: list[str] = []
        self.replayed = 0
        self.reached = 0           # the furthest step any run reached so far
        self.started = False       # whether a run has started (the next is a restart)
        self.exact = bool(timeline.phases)
        self.unit = _step_seconds(timeline.steps)
        self.last: _Run | None = None  # the run that ended last
        self.left: list[float] = []    # the seconds the current run's spans have left
        if not timeline.steps:
            self.notes.append("no step events: the running time is `other` (print the "
                              "contract's step events to split it)")
        if not self.exact:
            self.notes.append("no phase events: checkpoint, eval and start-up times are "
                              "estimated from the other events")

    def add(self, name: str, seconds: float) -> None:
        if seconds > 0:
            self.wall[name] = self.wall.get(name, 0.0) + seconds

    def attempt(self, attempt: Attempt) -> None:
        end = attempt.ended_at or self.t.now
        provisioning = attempt.pending_at or attempt.started_at or end
        self.add("queued", _secs(attempt.created_at, min(provisioning, end)))
        if attempt.pending_at is not None:
            self.add("provisioning", _secs(attempt.pending_at, attempt.started_at or end))
        if attempt.started_at is None:
            return
        if not attempt.billed:
            self.add("preempted_unbilled", _secs(attempt.started_at, end))
            return
        for run in self._runs(attempt, end):
            self._run(attempt.number, run)

    def unrecovered(self) -> None:
        """The steps after the last checkpoint of a disrupted run that nothing resumed from
        (the job ended there): run once, lost for good."""
        run = self.last
        if run is None or not run.disrupted or run.active or self.unit is None:
            return
        saved = [m.step for m in self.t.markers if m.kind == "checkpoint_saved"
                 and m.step is not None]
        since = max(saved, default=0)
        lost = min(max(self.reached - since, 0) * self.unit, self.wall.get(PRODUCTIVE, 0.0))
        if lost > 0:
            self.wall[PRODUCTIVE] -= lost
            self.add("lost_progress", lost)

    def _runs(self, attempt: Attempt, end: datetime) -> list[_Run]:
        """The attempt's running spans between merged preemption gaps."""
        assert attempt.started_at is not None
        rows = sorted((d for d in self.t.disruptions if d.attempt == attempt.number),
                      key=lambda d: d.occurred_at)
        runs: list[_Run] = []
        start, base = attempt.started_at, attempt.resume_step or 0
        for row in rows:
            if row.occurred_at < start:  # a second replica's notice inside the same gap
                gap_end = min(max(row.resumed_at or end, start), end)
                self.add("preempted_unbilled", _secs(start, gap_end))
                start = gap_end
                continue
            stop = min(row.occurred_at, end)
            runs.append(_Run(start, stop, base, not self.started and not runs,
                             disrupted=True, active=False, stopped=row.step))
            resumed = min(row.resumed_at or end, end)
            self.add("preempted_unbilled", _secs(stop, resumed))
            start = resumed
            base = row.resumed_from_step if row.resumed_from_step is not None else base
            if row.resumed_at is None:
                break
        if start < end or not runs:
            runs.append(_Run(start, end, base, not self.started and not runs,
                             disrupted=attempt.disrupted, active=attempt.ended_at is None))
        return runs

    def _run(self, attempt: int, run: _Run) -> None:
        inside = lambda at: run.start < at <= run.end  # noqa: E731
        steps = sorted((s for s in self.t.steps if s.attempt == attempt and inside(s.at)),
                       key=lambda s: (s.at, s.step))
        phases = [p for p in self.t.phases if p.attempt == attempt and inside(p.at)]
        markers = [m for m in self.t.markers if m.attempt == attempt and inside(m.at)]
        resumed = [m.step for m in markers if m.kind == "resumed" and m.step is not None]
        base = resumed[0] if resumed else run.base
        startup = "program_startup" if run.first and base == 0 else "restore"
        self.started = True
        self.last = run
        self.left = self._take_phases([run.start, *(s.at for s in steps), run.end], phases)
        self._spans(run, startup, base, steps, markers)
        # What the run reached (the steps it ran after the notice too): a later run's replay.
        self.reached = max(self.reached, run.stopped or 0, *(s.step for s in steps))

    def _take_phases(self, bounds: list[datetime], phases: list[Phase]) -> list[float]:
        """The seconds each span between BOUNDS (the run's start, its step events, its end)
        has left once the phases are counted: each from the span it ends in, what does not
        fit there from the spans before it."""
        left = [_secs(start, end) for start, end in itertools.pairwise(bounds)]
        for phase in sorted(phases, key=lambda p: p.at):
            span = min(max(bisect.bisect_left(bounds, phase.at) - 1, 0), len(left) - 1)
            want = max(phase.seconds, 0.0)
            while want > 0 and span >= 0:
                taken = min(want, left[span])
                self.add(phase.phase, taken)
                left[span] -= taken
                want -= taken
                span -= 1
        return left

    def _spans(self, run: _Run, startup: str, base: int, steps: list[Step],
               markers: list[Marker]) -> None:
        if not steps:
            rest = self._carve(0, run.start, run.end, markers, expected=None)
            self.add("other" if not self.t.steps else startup, rest)
            return
        # Start-up: to the first step event, less the steps that event reports.
        first = steps[0]
        self._steps(0, startup, run.start, first.at, base, first.step, markers)
        for span, (before, after) in enumerate(itertools.pairwise(steps), start=1):
            self._steps(span, None, before.at, after.at, before.step, after.step, markers)
        # After the last step: one step's time is the step in flight; a hang's silence, or
        # an unmeasured final eval or save, is what lies beyond it.
        rest = self._carve(len(steps), steps[-1].at, run.end, markers, expected=self.unit)
        if run.disrupted:
            self.add("lost_progress", rest)
        elif run.active:
            self.add(PRODUCTIVE, rest)  # the step in flight
        else:
            self.add("program_shutdown", rest)

    def _steps(self, span: int, leftover: str | None, start: datetime, end: datetime,
               done: int, step: int, markers: list[Marker]) -> None:
        """SPAN, from START to END, in which steps DONE+1..STEP ran (a step event every
        few steps reports several): their measured time is productive, or replayed where a
        run before reached them; the rest is LEFTOVER (start-up) or, between two step events,
        productive too (a step's own variation)."""
        count = max(step - done, 0)
        expected = self.unit * count if self.unit is not None else None
        rest = self._carve(span, start, end, markers, expected=expected)
        # Start-up with no measured step time (a single step event): all of it start-up.
        worked = (rest if leftover is None
                  else min(rest, expected) if expected is not None else 0.0)
        if leftover is not None:
            self.add(leftover, rest - worked)
        again = max(min(step, self.reached) - done, 0) if count else 0
        share = again / count if count else 0.0
        self.replayed += again
        self.add("replayed_steps", worked * share)
        self.add(PRODUCTIVE, worked * (1 - share))

    def _carve(self, span: int, start: datetime, end: datetime, markers: Iterable[Marker],
               expected: float | None) -> float:
        """The seconds of SPAN, (START, END], left after the phases (_take_phases) and,
        without phase events, what its markers stand for beyond EXPECTED."""
        left = self.left[span]
        for marker in markers:
            if not start < marker.at <= end or marker.kind == "resumed":
                continue
            if marker.kind == "checkpoint_saved" and self.exact:
                continue
            if marker.kind == "eval" and self.exact:
                continue
            if marker.kind == "checkpoint_saved" and marker.seconds is not None:
                taken = min(max(marker.seconds, 0.0), left)
            else:
                taken = max(left - (expected or 0.0), 0.0) if expected is not None else 0.0
            self.add(_MARKER_CATEGORY[marker.kind], taken)
            left -= taken
        return left


def _step_seconds(steps: Sequence[Step]) -> float | None:
    """The median time of one step, from consecutive step events of one attempt."""
    per_step: list[float] = []
    ordered = sorted(steps, key=lambda s: (s.attempt, s.at))
    for before, after in itertools.pairwise(ordered):
        if after.attempt == before.attempt and after.step > before.step:
            per_step.append(_secs(before.at, after.at) / (after.step - before.step))
    return statistics.median(per_step) if per_step else None


def _secs(start: datetime, end: datetime) -> float:
    return max((end - start).total_seconds(), 0.0)


def top_badput(categories: Iterable[Category], limit: int = 3) -> list[Category]:
    """The billed categories other than productive that took the most, largest first."""
    bad = [c for c in categories if c.billed and c.name != PRODUCTIVE
           and c.accelerator_seconds > 0]
    return sorted(bad, key=lambda c: c.accelerator_seconds, reverse=True)[:limit]
