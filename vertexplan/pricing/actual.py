"""A job's actual cost from what was stored about it: attempts, preemptions, checkpoints.

Pure: the caller (controlplane/costs/spend.py) reads the facts from the database and hands them
over; the same facts always give the same figures, so the reconciler can recompute them on every
sweep.

What is billed (prices README, DESIGN.md "Costs"):
- each attempt from its start (Vertex's startTime: RUNNING) to its end, or ``now`` while it runs;
  nothing while it is queued or provisioning (before startTime);
- per replica: the gap between a preemption (its first signal, the SIGTERM notice) and the
  replica's restart is not billed; the replicas of a pool share its price equally, so a pool's
  lines are billed for the mean running time of its replicas;
- an attempt that failed for a system reason (a STOCKOUT, a preemption it did not survive) is
  not billed at all; an attempt that failed in the user's code or was cancelled is;
- at the rate of the attempt's own scheduling (SPOT, FLEX_START, STANDARD), from the price
  snapshot stored when that attempt was submitted, never from the current table.

Lost compute of a preemption: the work since the last checkpoint the replica can resume from,
i.e. from the later of the run's start and that checkpoint's save time up to the preemption,
priced like the replica's running time. A checkpoint written after the notice (the trainer's
emergency checkpoint) keeps all the work: nothing is lost. Lost compute is part of the bill;
``useful`` is the bill less the lost compute.

Rounding: each line item of each attempt, and each preemption's lost compute, is rounded once,
half-up, to a whole micro-dollar; totals are sums of those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

from vertexplan.pricing.estimate import STRATEGY_RATES, Estimate, RateName
from vertexplan.pricing.money import SECONDS_PER_HOUR, round_half_up, seconds_of

_REPLICA = re.compile(r"workerpool(?P<pool>\d+)-(?P<index>\d+)")


@dataclass(frozen=True)
class AttemptFacts:
    number: int
    estimate: Estimate  # the attempt's price snapshot, restored
    rate: RateName  # the rate its scheduling strategy is billed at
    started_at: datetime | None
    ended_at: datetime | None  # None while it runs
    system_failure: bool = False


@dataclass(frozen=True)
class PreemptionFacts:
    attempt: int
    replica: str  # workerpool<pool>-<index>
    occurred_at: datetime
    resumed_at: datetime | None  # None: not running again yet
    # When the checkpoint the replica resumes from was saved; None: no checkpoint at all.
    preserved_at: datetime | None = None


@dataclass(frozen=True)
class LineCost:
    attempt: int
    pool: int
    role: str
    resource: str
    name: str
    quantity: int
    rate: RateName
    hourly: int  # micro-dollars per hour at ``rate`` for the whole line (all replicas)
    billed: timedelta  # mean billed running time of the pool's replicas
    cost: int  # micro-dollars


@dataclass(frozen=True)
class PreemptionCost:
    attempt: int
    replica: str
    occurred_at: datetime
    resumed_at: datetime | None
    not_billed: timedelta  # the gap before the restart (or up to now / the attempt's end)
    lost_time: timedelta  # work since the last usable checkpoint
    lost: int  # micro-dollars


@dataclass(frozen=True)
class AttemptCost:
    number: int
    rate: RateName
    hourly: int  # the attempt's full rate, every replica running
    running: timedelta  # start to end (or now), preemption gaps included
    billed: int
    lost: int
    system_failure: bool


@dataclass(frozen=True)
class JobCost:
    billed: int  # micro-dollars billed so far (the final cost once the job has ended)
    lost: int  # of which lost to preemptions
    attempts: tuple[AttemptCost, ...]
    lines: tuple[LineCost, ...]
    preemptions: tuple[PreemptionCost, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def useful(self) -> int:
        return self.billed - self.lost

    def by_resource(self) -> dict[str, int]:
        """Micro-dollars per resource name (n1-standard-4, NVIDIA_TESLA_T4, pd-ssd...)."""
        out: dict[str, int] = {}
        for line in self.lines:
            out[line.name] = out.get(line.name, 0) + line.cost
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "billed": self.billed,
            "lost": self.lost,
            "useful": self.useful,
            "attempts": [
                {"number": a.number, "rate": a.rate, "hourly": a.hourly,
                 "running_s": a.running.total_seconds(), "billed": a.billed, "lost": a.lost,
                 "system_failure": a.system_failure}
                for a in self.attempts
            ],
            "lines": [
                {"attempt": line.attempt, "pool": line.pool, "role": line.role,
                 "resource": line.resource, "name": line.name, "quantity": line.quantity,
                 "rate": line.rate, "hourly": line.hourly,
                 "billed_s": line.billed.total_seconds(), "cost": line.cost}
                for line in self.lines
            ],
            "preemptions": [
                {"attempt": p.attempt, "replica": p.replica,
                 "occurred_at": p.occurred_at.isoformat(),
                 "resumed_at": p.resumed_at.isoformat() if p.resumed_at else None,
                 "not_billed_s": p.not_billed.total_seconds(),
                 "lost_s": p.lost_time.total_seconds(), "lost": p.lost}
                for p in self.preemptions
            ],
            "notes": list(self.notes),
        }


def replica_pool(replica: str) -> tuple[int, int] | None:
    """(pool, index) of 'workerpool1-3'; None for a name that is not a replica's."""
    match = _REPLICA.fullmatch(replica)
    return (int(match["pool"]), int(match["index"])) if match else None


def job_cost(
    attempts: Iterable[AttemptFacts],
    preemptions: Iterable[PreemptionFacts],
    replicas: Mapping[int, int],
    now: datetime,
) -> JobCost:
    """The billed cost, attempt by attempt and line by line, and the compute lost to each
    preemption. ``replicas``: the replica count of each worker pool (by index)."""
    by_replica: dict[tuple[int, str], list[PreemptionFacts]] = {}
    for p in preemptions:
        by_replica.setdefault((p.attempt, p.replica), []).append(p)
    for rows in by_replica.values():
        rows.sort(key=lambda p: p.occurred_at)
    bill = _Bill()
    for attempt in sorted(attempts, key=lambda a: a.number):
        if attempt.started_at is None:
            continue  # never ran: queued time is not billed
        _bill_attempt(bill, attempt, by_replica, replicas, now)
    return JobCost(
        billed=sum(a.billed for a in bill.attempts),
        lost=sum(a.lost for a in bill.attempts),
        attempts=tuple(bill.attempts),
        lines=tuple(bill.lines),
        preemptions=tuple(bill.preemptions),
        notes=tuple(dict.fromkeys(bill.notes)),
    )


@dataclass
class _Bill:
    """What ``job_cost`` gathers, attempt after attempt."""

    attempts: list[AttemptCost] = field(default_factory=list)
    lines: list[LineCost] = field(default_factory=list)
    preemptions: list[PreemptionCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Attempt:
    """One attempt being billed: its facts, its span, the hourly rate of each of its lines."""

    facts: AttemptFacts
    start: datetime
    end: datetime
    rates: dict[int, dict[str, int]]


def _bill_attempt(bill: _Bill, facts: AttemptFacts,
                  by_replica: Mapping[tuple[int, str], list[PreemptionFacts]],
                  replicas: Mapping[int, int], now: datetime) -> None:
    assert facts.started_at is not None
    attempt = _Attempt(facts, start=facts.started_at,
                       end=max(facts.ended_at or now, facts.started_at),
                       rates=_rates(facts, bill.notes))
    attempt_lines: list[LineCost] = []
    attempt_lost = 0
    for pool in sorted({line.pool for line in facts.estimate.lines}):
        count = replicas.get(pool, 1)
        if count <= 0:
            continue
        pool_seconds = Fraction(0)
        for index in range(count):
            replica = f"workerpool{pool}-{index}"
            rows = by_replica.get((facts.number, replica), [])
            gaps = [(p.occurred_at, p.resumed_at or attempt.end) for p in rows]
            pool_seconds += seconds_of(_running(attempt.start, attempt.end, gaps))
            for cost in _preemption_costs(attempt, pool, count, replica, rows):
                attempt_lost += cost.lost
                bill.preemptions.append(cost)
        attempt_lines += _line_costs(attempt, pool, pool_seconds / count)
    billed = sum(line.cost for line in attempt_lines)
    bill.lines += attempt_lines
    bill.attempts.append(AttemptCost(
        number=facts.number, rate=facts.rate,
        hourly=sum(attempt.rates[line.pool][line.name] for line in facts.estimate.lines),
        running=attempt.end - attempt.start, billed=billed,
        # Lost work is billed running time: never more than the bill.
        lost=min(attempt_lost, billed), system_failure=facts.system_failure))


def _preemption_costs(attempt: _Attempt, pool: int, count: int, replica: str,
                      rows: Sequence[PreemptionFacts]) -> Iterator[PreemptionCost]:
    """Each preemption of one replica: the time it was not billed and the work it lost."""
    facts, start, end = attempt.facts, attempt.start, attempt.end
    pool_rate = sum((Fraction(attempt.rates[line.pool][line.name])
                     for line in facts.estimate.lines if line.pool == pool), Fraction(0))
    for position, row in enumerate(rows):
        run_start = rows[position - 1].resumed_at if position else start
        lost_time = _lost_time(row, run_start or start)
        lost = 0 if facts.system_failure else round_half_up(
            pool_rate * seconds_of(lost_time) / (count * SECONDS_PER_HOUR))
        not_billed = (end - start) - _running(start, end, [(row.occurred_at,
                                                            row.resumed_at or end)])
        yield PreemptionCost(
            attempt=facts.number, replica=replica, occurred_at=row.occurred_at,
            resumed_at=row.resumed_at, not_billed=not_billed, lost_time=lost_time, lost=lost)


def _line_costs(attempt: _Attempt, pool: int, mean: Fraction) -> list[LineCost]:
    """The pool's lines, billed for the mean running time of its replicas."""
    facts = attempt.facts
    out = []
    for line in facts.estimate.lines:
        if line.pool != pool:
            continue
        hourly = attempt.rates[line.pool][line.name]
        cost = 0 if facts.system_failure else round_half_up(hourly * mean / SECONDS_PER_HOUR)
        out.append(LineCost(
            attempt=facts.number, pool=line.pool, role=line.role,
            resource=line.resource, name=line.name, quantity=line.quantity,
            rate=facts.rate, hourly=hourly,
            billed=timedelta(seconds=float(mean)) if not facts.system_failure
            else timedelta(0), cost=cost))
    return out


def _rates(attempt: AttemptFacts, notes: list[str]) -> dict[int, dict[str, int]]:
    """Micro-dollars per hour of each line at the attempt's rate. A line without that rate
    (a snapshot taken under another strategy) is billed on demand, and says so."""
    out: dict[int, dict[str, int]] = {}
    for line in attempt.estimate.lines:
        value = line.hourly.get(attempt.rate)
        if value is None:
            notes.append(f"attempt {attempt.number}: no {attempt.rate} price for {line.name}; "
                         "billed at the on-demand rate")
            value = line.hourly.on_demand
        out.setdefault(line.pool, {})[line.name] = value
    return out


def _running(start: datetime, end: datetime,
             gaps: Sequence[tuple[datetime, datetime]]) -> timedelta:
    """Time in [start, end] outside every gap (gaps may overlap or reach past the ends)."""
    total = end - start
    merged: list[list[datetime]] = []
    for gap_start, gap_end in sorted((max(a, start), min(b, end)) for a, b in gaps):
        if gap_end <= gap_start:
            continue
        if merged and gap_start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], gap_end)
        else:
            merged.append([gap_start, gap_end])
    for gap_start, gap_end in merged:
        total -= gap_end - gap_start
    return max(total, timedelta(0))


def _lost_time(row: PreemptionFacts, run_start: datetime) -> timedelta:
    saved = row.preserved_at
    if saved is not None and saved >= row.occurred_at:
        return timedelta(0)  # saved after the notice: the work is kept
    since = run_start if saved is None else max(saved, run_start)
    return max(row.occurred_at - since, timedelta(0))


def rate_of(scheduling: str) -> RateName:
    """The rate a Scheduling.Strategy is billed at (STANDARD when unknown)."""
    return STRATEGY_RATES.get(scheduling or "STANDARD", "on_demand")
