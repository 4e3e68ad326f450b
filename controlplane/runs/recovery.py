"""Recovery beyond Vertex's own retries: named strategies, as SkyPilot's managed jobs have.

Vertex restarts a preempted SPOT job itself (up to six times) and a failing worker (five
times). When that is not enough (the job ends FAILED with a STOCKOUT, or a preemption killed
it), a recovery strategy decides where the next attempt runs: a new CustomJob on the same
output folder, so the trainer resumes from the newest complete checkpoint.

    classify(...)      how an attempt ended: preemption, stockout, config, application, ...
    Policy             a job's strategy name, its limits (all recoveries, tries per step
                       and per region), its backoff and its scheduling fallback and other
                       regions (recovery_policy.py reads it from a job request)
    STRATEGIES         name -> Strategy; register more with @register("name")
    plan(job, ...)     the next placement and its backoff, or why there is none

Configuration errors (an invalid spec, a missing permission, an image that does not exist)
never recover: they would fail the same way every time.
"""

from __future__ import annotations

import abc
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from controlplane.core import preemption_lines
from vertexplan.catalog import validate_custom_job

SCHEDULING_STRATEGIES = ("SPOT", "FLEX_START", "STANDARD")

# google.rpc.Code values in CustomJob.error.
CODE_CANCELLED = 1
CODE_INVALID_ARGUMENT = 3
CODE_DEADLINE_EXCEEDED = 4
CODE_NOT_FOUND = 5
CODE_PERMISSION_DENIED = 7
CODE_RESOURCE_EXHAUSTED = 8
CODE_FAILED_PRECONDITION = 9
CODE_UNAUTHENTICATED = 16
_CONFIG_CODES = frozenset({CODE_INVALID_ARGUMENT, CODE_NOT_FOUND, CODE_PERMISSION_DENIED,
                           CODE_FAILED_PRECONDITION, CODE_UNAUTHENTICATED})
# What Vertex and Compute Engine write when the job as configured cannot start.
_CONFIG_TEXT = re.compile(
    r"unable to pull|pull access denied|image .*not found|manifest unknown|"
    r"failed to pull|imagepullbackoff|permission denied|permission '|does not have permission|"
    r"not authorized|invalid argument|invalid image|service account",
    re.IGNORECASE,
)
_STOCKOUT_TEXT = re.compile(r"stockout|resource(s)? (is |are )?(not|un)available|"
                            r"zone_resource_pool_exhausted|capacity", re.IGNORECASE)
# A replica killed by the spot VM's shutdown (ACPI soft off -> SIGTERM, then SIGKILL): its
# exit status, or words that say so (core/preemption_lines.py).
_KILLED_STATUS = re.compile(r"status of (?:143|137)\b", re.IGNORECASE)


class Failure(StrEnum):
    NONE = ""
    PREEMPTION = "preemption"
    STOCKOUT = "stockout"
    CONFIG = "config"
    APPLICATION = "application"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


RECOVERABLE = frozenset({Failure.PREEMPTION, Failure.STOCKOUT})


def classify(*, state: str, error_code: int, error_message: str, spot: bool,
             preempted: bool) -> Failure:
    """How an attempt ended. `preempted`: a preemption was seen in its logs (jobs/restarts)."""
    if state != "JOB_STATE_FAILED" and state not in ("JOB_STATE_EXPIRED",
                                                     "JOB_STATE_PARTIALLY_SUCCEEDED"):
        return Failure.CANCELLED if state == "JOB_STATE_CANCELLED" else Failure.NONE
    message = error_message or ""
    if error_code in _CONFIG_CODES or _CONFIG_TEXT.search(message):
        return Failure.CONFIG
    if error_code == CODE_RESOURCE_EXHAUSTED or _STOCKOUT_TEXT.search(message):
        return Failure.STOCKOUT
    if error_code == CODE_CANCELLED:
        return Failure.CANCELLED
    if error_code == CODE_DEADLINE_EXCEEDED:
        return Failure.TIMEOUT
    if preempted or (spot and (_KILLED_STATUS.search(message)
                               or preemption_lines.says_preempted(message))):
        return Failure.PREEMPTION
    return Failure.APPLICATION


# --- policy ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Policy:
    """A job's recovery policy (parsed from its request by runs/recovery_policy.py)."""

    strategy: str = ""                    # a name in STRATEGIES; "" = never recover
    max_recoveries: int = 0               # all recoveries together, whatever the step
    fallback: tuple[str, ...] = ()        # scheduling strategies to move to, in order
    regions: tuple[str, ...] = ()         # other regions to try, in order
    backoff_s: float = 10.0               # first wait; doubles, with jitter, up to the cap
    backoff_cap_s: float = 300.0
    # After a preemption, new attempts where the job was (capacity was there) before moving on.
    retries_in_place: int = 2
    # After a stockout, tries (the first included) one scheduling strategy in one region gets
    # before the job moves to the next step; the last step keeps trying until max_recoveries.
    tries_per_step: int = 1
    # Tries in one region, all its steps together, before the next region; 0: only the steps'.
    tries_per_region: int = 0

    @property
    def enabled(self) -> bool:
        return bool(self.strategy) and self.strategy != "none" and self.max_recoveries > 0

    def options(self) -> dict[str, Any]:
        return {"fallback": list(self.fallback), "regions": list(self.regions),
                "backoff_s": self.backoff_s, "backoff_cap_s": self.backoff_cap_s,
                "retries_in_place": self.retries_in_place,
                "tries_per_step": self.tries_per_step,
                "tries_per_region": self.tries_per_region}


def policy_of(job: Any) -> Policy:
    options = job.recovery_options or {}
    return Policy(
        strategy=job.recovery_strategy, max_recoveries=job.max_recoveries,
        fallback=tuple(options.get("fallback", ())), regions=tuple(options.get("regions", ())),
        backoff_s=float(options.get("backoff_s", Policy.backoff_s)),
        backoff_cap_s=float(options.get("backoff_cap_s", Policy.backoff_cap_s)),
        retries_in_place=int(options.get("retries_in_place", Policy.retries_in_place)),
        tries_per_step=int(options.get("tries_per_step", Policy.tries_per_step)),
        tries_per_region=int(options.get("tries_per_region", Policy.tries_per_region)),
    )


# --- strategies -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Placement:
    scheduling: str
    region: str


@dataclass
class Decision:
    placement: Placement | None
    delay_s: float = 0.0
    why: str = ""
    skipped: list[str] = field(default_factory=list)


class Strategy(abc.ABC):
    """Orders the placements a job may try and picks the next after a failure."""

    name = ""

    @abc.abstractmethod
    def order(self, schedulings: list[str], regions: list[str]) -> list[Placement]: ...

    def next(self, candidates: list[Placement], current: Placement,
             failure: Failure) -> Placement:
        """Default: move on along the order; stay on the last one when it is exhausted."""
        if current not in candidates:
            return candidates[0]
        index = candidates.index(current)
        return candidates[min(index + 1, len(candidates) - 1)]


STRATEGIES: dict[str, Strategy] = {}


def register(name: str) -> Callable[[type[Strategy]], type[Strategy]]:
    def add(cls: type[Strategy]) -> type[Strategy]:
        instance = cls()
        instance.name = name
        STRATEGIES[name] = instance
        return cls

    return add


@register("none")
class NoRecovery(Strategy):
    def order(self, schedulings: list[str], regions: list[str]) -> list[Placement]:
        return []


@register("failover")
class Failover(Strategy):
    """SkyPilot's FAILOVER: a preempted job first retries where it was (capacity was there);
    a stockout moves along the scheduling fallback, then to the next region."""

    def order(self, schedulings: list[str], regions: list[str]) -> list[Placement]:
        return [Placement(s, r) for r in regions for s in schedulings]

    def next(self, candidates: list[Placement], current: Placement,
             failure: Failure) -> Placement:
        if failure == Failure.PREEMPTION and current in candidates:
            return current
        return super().next(candidates, current, failure)


@register("eager_next_region")
class EagerNextRegion(Strategy):
    """SkyPilot's EAGER_NEXT_REGION: any failure moves to the next region at once; the
    scheduling fallback is used once every region has been tried."""

    def order(self, schedulings: list[str], regions: list[str]) -> list[Placement]:
        return [Placement(s, r) for s in schedulings for r in regions]


def backoff_s(policy: Policy, recovery_number: int, rng: random.Random | None = None) -> float:
    """Capped exponential backoff with jitter (half to full of the capped value)."""
    rng = rng or random.Random()
    capped = min(policy.backoff_cap_s, policy.backoff_s * 2 ** max(recovery_number - 1, 0))
    return capped * rng.uniform(0.5, 1.0)


def with_scheduling(custom_job: dict[str, Any], scheduling: str) -> dict[str, Any]:
    """A copy of a CustomJob with another Scheduling.strategy (FLEX_START waits for capacity
    without limit: maxWaitDuration 0s)."""
    spec = dict(custom_job.get("jobSpec") or {})
    sched = {k: v for k, v in (spec.get("scheduling") or {}).items() if k != "maxWaitDuration"}
    sched["strategy"] = scheduling
    if scheduling == "FLEX_START":
        sched["maxWaitDuration"] = "0s"
    spec["scheduling"] = sched
    return {**custom_job, "jobSpec": spec}


def scheduling_of(custom_job: dict[str, Any]) -> str:
    value = ((custom_job.get("jobSpec") or {}).get("scheduling") or {}).get("strategy")
    return value if value in SCHEDULING_STRATEGIES else "STANDARD"


def candidates(policy: Policy, custom_job: dict[str, Any], home: Placement,
               strategy: Strategy) -> tuple[list[Placement], list[str]]:
    """The placements the strategy orders, less those Vertex would refuse for this job (e.g.
    FLEX_START on a machine without a supported GPU), with the reasons they were left out."""
    schedulings = list(dict.fromkeys([home.scheduling, *policy.fallback]))
    regions = list(dict.fromkeys([home.region, *policy.regions]))
    kept: list[Placement] = []
    skipped: list[str] = []
    for placement in strategy.order(schedulings, regions):
        if placement == home:
            kept.append(placement)
            continue
        problems = validate_custom_job(with_scheduling(custom_job, placement.scheduling),
                                       placement.region)
        if problems:
            skipped.append(f"{placement.scheduling} in {placement.region}: {problems[0].message}")
        else:
            kept.append(placement)
    return kept, skipped


def streaks(history: list[Placement]) -> tuple[int, int]:
    """(tries in a row at the newest placement, tries in a row in its region), from the
    placements of a job's attempts, newest first: what its step and region limits count."""
    if not history:
        return 0, 0
    current = history[0]
    here = next((n for n, p in enumerate(history) if p != current), len(history))
    region = next((n for n, p in enumerate(history) if p.region != current.region),
                  len(history))
    return here, region


def _refusal(policy: Policy, failure: Failure, recoveries_done: int) -> str:
    if failure not in RECOVERABLE:
        return (f"not recovered: the attempt ended with a {failure or 'no'} failure, which "
                "another attempt would repeat")
    if not policy.enabled:
        return "no recovery strategy is configured for this job"
    if recoveries_done >= policy.max_recoveries:
        return f"not recovered: all {policy.max_recoveries} recoveries used"
    if policy.strategy not in STRATEGIES:
        return f"unknown recovery strategy {policy.strategy!r}"
    return ""


def _next_region(options: list[Placement], current: Placement) -> Placement | None:
    """The first placement after `current` in the strategy's order in another region."""
    start = options.index(current) + 1 if current in options else 0
    return next((p for p in options[start:] if p.region != current.region), None)


def _choose(policy: Policy, strategy: Strategy, options: list[Placement], current: Placement,
            failure: Failure, here: int, in_region: int) -> tuple[Placement, str]:
    """The next placement and why: the region's limit first, then the step's, then the
    strategy's own order. The last placement in the order keeps the remaining recoveries:
    there is nowhere further to go."""
    if policy.tries_per_region and in_region >= policy.tries_per_region:
        later = _next_region(options, current)
        if later is not None:
            return later, f"{in_region} of {policy.tries_per_region} tries in {current.region}"
    if failure == Failure.STOCKOUT and here < policy.tries_per_step and current in options:
        return current, f"try {here + 1} of {policy.tries_per_step} at this step"
    if failure == Failure.PREEMPTION and here - 1 >= policy.retries_in_place:
        # Preempted again and again where it was: no capacity there to speak of.
        chosen = strategy.next(options, current, Failure.STOCKOUT)
        return chosen, f"{here - 1} of {policy.retries_in_place} retries in place used"
    chosen = strategy.next(options, current, failure)
    if chosen == current and failure == Failure.PREEMPTION:
        return chosen, f"retry {here} of {policy.retries_in_place} in place"
    return chosen, "the last step" if chosen == current else "the next step"


def plan(*, policy: Policy, custom_job: dict[str, Any], home: Placement, current: Placement,
         failure: Failure, recoveries_done: int, rng: random.Random | None = None,
         tries_here: int = 1, tries_in_region: int = 1) -> Decision:
    """Whether and where to run the next attempt after `current` ended with `failure`.

    `tries_here`, `tries_in_region`: attempts in a row at `current` and in its region, the one
    that failed included (streaks() counts them). A stockout stays at its step until the
    step's tries are used; a preemption stays in place for `retries_in_place` retries. The
    wait doubles (jittered, capped) with each try at one placement and starts again from
    backoff_s at a new one."""
    refused = _refusal(policy, failure, recoveries_done)
    if refused:
        return Decision(None, why=refused)
    strategy = STRATEGIES[policy.strategy]
    options, skipped = candidates(policy, custom_job, home, strategy)
    if not options:
        return Decision(None, why="no placement left to try", skipped=skipped)
    chosen, reason = _choose(policy, strategy, options, current, failure, tries_here,
                             tries_in_region)
    delay = backoff_s(policy, tries_here if chosen == current else 1, rng)
    return Decision(chosen, delay_s=delay,
                    why=f"{strategy.name}: {failure} on {current.scheduling} in "
                        f"{current.region} -> {chosen.scheduling} in {chosen.region} "
                        f"({reason})",
                    skipped=skipped)
