"""Actual cost: what Vertex bills for the time a job really ran.

Vertex bills a training job for the time its attempts run: nothing while it is queued, nothing
while it waits to restart after a preemption, and nothing for an attempt that failed for a
reason other than the user's (prices README). The billing increment for training is not
published (Compute Engine bills per second with a one-minute minimum, prediction in 30 s steps),
so no minimum or increment is applied: time is counted to the microsecond.

One rounding: the billed time of all intervals is summed exactly, multiplied by the hourly rate
in micro-dollars and divided by 3600 seconds once, rounding half-up to a whole micro-dollar.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from vertexplan.pricing.money import Quantity, cost_of_seconds


class Phase(StrEnum):
    QUEUED = "queued"  # waiting for resources (also a FLEX_START wait): not billed
    RUNNING = "running"  # an attempt's running time: billed
    PREEMPTED = "preempted"  # between a preemption and the restart: not billed


@dataclass(frozen=True)
class Interval:
    """A stretch of one job's life. ``system_failure`` marks the running time of an attempt
    that failed for a reason other than the user's: Vertex does not bill it."""

    start: datetime
    end: datetime
    phase: Phase = Phase.RUNNING
    system_failure: bool = False

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"interval ends ({self.end}) before it starts ({self.start})")

    @property
    def billed(self) -> bool:
        return self.phase == Phase.RUNNING and not self.system_failure


def billed_time(intervals: Iterable[Interval]) -> timedelta:
    """The billed running time. Overlapping running intervals (the same stretch reported twice)
    count once: a job's attempts run one after another, never side by side."""
    spans = sorted((i.start, i.end) for i in intervals if i.billed)
    total = timedelta(0)
    current_start: datetime | None = None
    current_end: datetime | None = None
    for start, end in spans:
        if current_end is None or start > current_end:
            if current_start is not None and current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_start is not None and current_end is not None:
        total += current_end - current_start
    return total


def billed_cost(intervals: Iterable[Interval], hourly_rate: int) -> int:
    """Micro-dollars billed for ``intervals`` at ``hourly_rate`` (micro-dollars per hour, from
    the job's price snapshot for its scheduling strategy)."""
    return cost_of_seconds(hourly_rate, billed_time(intervals))


def lost_compute(hourly_rate: int, seconds_since_last_checkpoint: Quantity | timedelta) -> int:
    """Micro-dollars of work a preemption threw away: the billed time since the last
    checkpoint. It is part of the billed cost, shown apart from the useful part."""
    return cost_of_seconds(hourly_rate, seconds_since_last_checkpoint)


@dataclass(frozen=True)
class ActualCost:
    billed: int  # micro-dollars Vertex bills
    lost: int  # of which spent on work lost to preemptions
    useful: int  # billed - lost


def actual_cost(
    intervals: Iterable[Interval],
    hourly_rate: int,
    lost_seconds: Iterable[Quantity | timedelta] = (),
) -> ActualCost:
    """Billed cost, split into useful work and work lost to each preemption (``lost_seconds``:
    the time since the last checkpoint at each preemption)."""
    billed = billed_cost(intervals, hourly_rate)
    lost = sum(lost_compute(hourly_rate, seconds) for seconds in lost_seconds)
    # Lost work is billed running time, so it cannot exceed the bill; cap it in case the
    # preemption reports and the intervals disagree.
    lost = min(lost, billed)
    return ActualCost(billed=billed, lost=lost, useful=billed - lost)
