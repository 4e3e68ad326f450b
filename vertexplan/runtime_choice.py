"""Choosing a serving runtime by measurement: the limits of a runtime trial's traffic, the cost
of a million generated tokens at a measured throughput, and the choice itself, the cheapest
runtime whose measured p99 latency meets the target.

A trial (controlplane/serving/trials.py) runs each candidate runtime of a model on the machine
type it will be deployed on, with the endpoint's expected traffic, and measures each one's
throughput and latency (trainers/serving/runtime_trial.py). One replica of that machine costs
the same per hour whatever runtime it serves, so a runtime's cost per million tokens is the
hourly price over the tokens it generates in an hour: the faster runtime is the cheaper one,
but only a runtime that meets the p99 target may be chosen (a runtime that batches harder may
buy its throughput with tail latency).

Pure: no Django, no trainers; money in integer micro-dollars (vertexplan.pricing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from vertexplan.pricing.money import round_half_up

# The runtimes a trial can measure, in the order the table shows them. tensorrt is not one: its
# engine is built for one GPU by its own packaging job, and measured by deploying it.
CANDIDATES = ("eager", "compiled", "aot", "triton", "vllm")

# What a row's note keeps of what the job wrote (the error that stopped a runtime).
NOTE_CHARS = 500

# A trial is a short job: enough requests for a p99 to mean something, few enough that the
# slowest runtime on a CPU machine ends in minutes. Prompt and output together stay within the
# byte-level models' context of 256 bytes (trainers' tiny preset).
LIMITS: Mapping[str, tuple[int, int]] = {
    "prompt_tokens": (1, 192),
    "output_tokens": (1, 64),
    "concurrency": (1, 32),
    "requests": (1, 256),
    "p99_target_ms": (1, 600_000),
}


class TrafficError(ValueError):
    """Expected traffic a trial cannot run: ``field`` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Traffic:
    """The endpoint's expected traffic: what each runtime is measured under."""

    prompt_tokens: int
    output_tokens: int
    concurrency: int
    requests: int
    p99_target_ms: int

    def __post_init__(self) -> None:
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise TrafficError(name, f"{name} must be a whole number from {low} to {high}, "
                                         f"not {value!r}")
        if self.requests < self.concurrency:
            raise TrafficError("requests", f"requests must be at least concurrency "
                                           f"({self.concurrency}), not {self.requests}")


@dataclass(frozen=True)
class Measured:
    """One runtime's row of a trial: its figures, or why it has none (``note``)."""

    runtime: str
    tokens_per_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    requests: int = 0
    note: str = ""  # "needs a GPU", the error that stopped it; "" when measured
    start_s: float | None = None  # process start to healthy

    @property
    def measured(self) -> bool:
        return self.tokens_per_s is not None and self.tokens_per_s > 0 \
            and self.p99_ms is not None

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Measured:
        """A row as the trial job wrote it: a file in the team's own output folder, so each
        field is taken only if it has its type (and a note only up to NOTE_CHARS)."""
        def number(key: str) -> float | None:
            value = row.get(key)
            return float(value) if isinstance(value, int | float) and not \
                isinstance(value, bool) and math.isfinite(value) else None

        requests = row.get("requests")
        return cls(runtime=str(row.get("runtime", "")), tokens_per_s=number("tokens_per_s"),
                   p50_ms=number("p50_ms"), p99_ms=number("p99_ms"),
                   requests=requests if type(requests) is int and requests >= 0 else 0,
                   note=str(row.get("note") or "")[:NOTE_CHARS], start_s=number("start_s"))

    def as_row(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "tokens_per_s": self.tokens_per_s,
                "p50_ms": self.p50_ms, "p99_ms": self.p99_ms, "requests": self.requests,
                "note": self.note, "start_s": self.start_s}


def cost_per_million_tokens(hourly_micros: int, tokens_per_s: float) -> int:
    """Micro-dollars per million generated tokens for one replica priced ``hourly_micros`` an
    hour that generates ``tokens_per_s``, rounded half-up."""
    if tokens_per_s <= 0:
        raise ValueError("a runtime that generated nothing has no cost per token")
    return round_half_up(Fraction(hourly_micros) * 1_000_000
                         / (Fraction(tokens_per_s) * 3600))


@dataclass(frozen=True)
class Choice:
    runtime: str | None  # None: no runtime met the target
    reason: str
    costs: Mapping[str, int | None]  # per runtime: micro-dollars per million tokens


def choose(rows: Iterable[Measured], p99_target_ms: float, hourly_micros: int | None) -> Choice:
    """The cheapest measured runtime whose p99 meets the target (ties: the lower p99, then the
    table's order). Without a price, cost follows throughput alone, so the fastest wins."""
    rows = list(rows)
    costs: dict[str, int | None] = {}
    for row in rows:
        costs[row.runtime] = cost_per_million_tokens(hourly_micros, row.tokens_per_s) \
            if row.measured and hourly_micros is not None else None  # type: ignore[arg-type]
    measured = [row for row in rows if row.measured]
    if not measured:
        return Choice(None, "no runtime was measured", costs)
    meeting = [row for row in measured if row.p99_ms <= p99_target_ms]  # type: ignore[operator]
    if not meeting:
        best = min(measured, key=lambda row: row.p99_ms)  # type: ignore[arg-type,return-value]
        return Choice(None, f"no runtime met the p99 target of {p99_target_ms:g} ms: the "
                            f"lowest p99 was {best.runtime}'s, {best.p99_ms:.1f} ms", costs)
    order = {name: i for i, name in enumerate(CANDIDATES)}

    def rank(row: Measured) -> tuple[float, float, int]:
        # 1 / throughput orders as cost does at one hourly price (and without one).
        return (1 / row.tokens_per_s, row.p99_ms, order.get(row.runtime, len(order)))  # type: ignore[operator]

    best = min(meeting, key=rank)
    others = len(meeting) - 1
    also = f", cheapest of {len(meeting)} that did" if others else ", the only one that did"
    return Choice(best.runtime, f"{best.runtime}: p99 {best.p99_ms:.1f} ms meets the target of "
                                f"{p99_target_ms:g} ms{also}", costs)
