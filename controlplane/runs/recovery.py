"""Recovery beyond Vertex's own retries: named strategies, as SkyPilot's managed jobs have.

Vertex restarts a preempted SPOT job itself (up to six times) and a failing worker (five
times). When that is not enough (the job ends FAILED with a STOCKOUT, or a preemption killed
it), a recovery strategy decides where the next attempt runs: a new CustomJob on the same
output folder, so the trainer resumes from the newest complete checkpoint.

    classify(...)      how an attempt ended: preemption, stockout, config, application, ...
    Policy             a job's strategy name, its limit and options (scheduling fallback,
                       other regions), from the job request or the site defaults
    STRATEGIES         name -> Strategy; register more with @register("name")
    plan(job, ...)     the next placement and its backoff, or why there is none

Configuration errors (an invalid spec, a missing permission, an image that does not exist)
never recover: they would fail the same way every time.
"""

from __future__ import annotations

import abc
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from django.conf import settings

from controlplane.backends.base import get_backend
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
# A replica killed by the spot VM's shutdown (ACPI soft off -> SIGTERM, then SIGKILL).
_PREEMPT_TEXT = re.compile(r"preempt|SIGTERM|status of 143\b|status of 137\b", re.IGNORECASE)


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
    if preempted or (spot and _PREEMPT_TEXT.search(message)):
        return Failure.PREEMPTION
    return Failure.APPLICATION


# --- policy ---------------------------------------------------------------------------------

def _site(name: str, default: str) -> str:
    value = getattr(settings, name, None)
    return str(value) if value is not None else os.environ.get(name, default)


@dataclass(frozen=True)
class Policy:
    strategy: str = ""                    # a name in STRATEGIES; "" = never recover
    max_recoveries: int = 0
    fallback: tuple[str, ...] = ()        # scheduling strategies to move to, in order
    regions: tuple[str, ...] = ()         # other regions to try, in order
    backoff_s: float = 10.0               # first wait; doubles, with jitter, up to the cap
    backoff_cap_s: float = 300.0
    # After a preemption, new attempts where the job was (capacity was there) before moving on.
    retries_in_place: int = 2

    @property
    def enabled(self) -> bool:
        return bool(self.strategy) and self.strategy != "none" and self.max_recoveries > 0

    def options(self) -> dict[str, Any]:
        return {"fallback": list(self.fallback), "regions": list(self.regions),
                "backoff_s": self.backoff_s, "backoff_cap_s": self.backoff_cap_s,
                "retries_in_place": self.retries_in_place}


def site_default(spot: bool) -> Policy:
    """What a job gets when its request says nothing: spot jobs recover, others do not.

    CP_RECOVERY_STRATEGY (failover), CP_MAX_RECOVERIES (3), CP_RECOVERY_FALLBACK (e.g.
    "FLEX_START,STANDARD"; empty: stay on SPOT), CP_RECOVERY_BACKOFF_S (10) and
    CP_RECOVERY_BACKOFF_CAP_S (300), from the settings or the environment.
    """
    backoff = float(_site("CP_RECOVERY_BACKOFF_S", "10"))
    cap = float(_site("CP_RECOVERY_BACKOFF_CAP_S", "300"))
    if not spot:
        return Policy(backoff_s=backoff, backoff_cap_s=cap)
    fallback = tuple(s.strip() for s in _site("CP_RECOVERY_FALLBACK", "").split(",")
                     if s.strip() in SCHEDULING_STRATEGIES)
    return Policy(strategy=_site("CP_RECOVERY_STRATEGY", "failover"),
                  max_recoveries=int(_site("CP_MAX_RECOVERIES", "3")), fallback=fallback,
                  backoff_s=backoff, backoff_cap_s=cap)


def parse_policy(request: dict[str, Any], *, spot: bool | None = None
                 ) -> tuple[Policy, dict[str, list[str]]]:
    """The policy of a job request's optional "recovery" object, and errors keyed by field:

        "recovery": {"strategy": "failover", "max_recoveries": 3, "retries_in_place": 2,
                     "fallback": ["FLEX_START", "STANDARD"], "regions": ["us-east1"]}
    """
    if spot is None:
        spot = bool(request.get("spot")) or request.get("scheduling_strategy") == "SPOT"
    base = site_default(spot)
    raw = request.get("recovery")
    if raw is None:
        return base, {}
    errors: dict[str, list[str]] = {}

    def error(key: str, message: str) -> None:
        errors.setdefault(f"recovery.{key}", []).append(message)

    if not isinstance(raw, dict):
        return base, {"recovery": ["must be an object such as {\"strategy\": \"failover\"}"]}
    unknown = sorted(set(raw) - {"strategy", "max_recoveries", "retries_in_place", "fallback",
                                 "regions"})
    for key in unknown:
        error(key, "unknown field; valid: strategy, max_recoveries, retries_in_place, "
                   "fallback, regions")
    strategy = raw.get("strategy", base.strategy or "failover")
    if strategy not in STRATEGIES:
        error("strategy", f"{strategy!r} is not a recovery strategy; valid: "
              f"{', '.join(sorted(STRATEGIES))}")
    limit = raw.get("max_recoveries", base.max_recoveries or 3)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= 20:
        error("max_recoveries", "must be a whole number from 0 to 20")
        limit = 0
    in_place = raw.get("retries_in_place", base.retries_in_place)
    if isinstance(in_place, bool) or not isinstance(in_place, int) or not 0 <= in_place <= 10:
        error("retries_in_place", "must be a whole number from 0 to 10")
        in_place = base.retries_in_place
    fallback = raw.get("fallback", [])
    if not isinstance(fallback, list) or any(s not in SCHEDULING_STRATEGIES for s in fallback):
        error("fallback", f"must be a list of {', '.join(SCHEDULING_STRATEGIES)}")
        fallback = []
    regions = raw.get("regions", [])
    if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
        error("regions", "must be a list of region names")
        regions = []
    elif any(r != request.get("region", settings.VERTEX_REGION) for r in regions) and \
            not backend_can_change_region():
        error("regions", f"this backend submits to {settings.VERTEX_REGION} only")
    policy = replace(base, strategy=strategy, max_recoveries=limit, fallback=tuple(fallback),
                     regions=tuple(regions), retries_in_place=in_place)
    return policy, errors


def backend_can_change_region() -> bool:
    return callable(getattr(get_backend(), "for_region", None))


def policy_of(job: Any) -> Policy:
    options = job.recovery_options or {}
    return Policy(
        strategy=job.recovery_strategy, max_recoveries=job.max_recoveries,
        fallback=tuple(options.get("fallback", ())), regions=tuple(options.get("regions", ())),
        backoff_s=float(options.get("backoff_s", 10.0)),
        backoff_cap_s=float(options.get("backoff_cap_s", 300.0)),
        retries_in_place=int(options.get("retries_in_place", Policy.retries_in_place)),
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


def plan(*, policy: Policy, custom_job: dict[str, Any], home: Placement, current: Placement,
         failure: Failure, recoveries_done: int, rng: random.Random | None = None,
         in_place_done: int = 0) -> Decision:
    """Whether and where to run the next attempt after `current` ended with `failure`.

    `in_place_done`: recovery attempts already made at `current` in a row. A preemption past
    the policy's retries_in_place counts as no capacity there: the job moves on."""
    if failure not in RECOVERABLE:
        return Decision(None, why=f"not recovered: the attempt ended with a {failure or 'no'} "
                                  "failure, which another attempt would repeat")
    if not policy.enabled:
        return Decision(None, why="no recovery strategy is configured for this job")
    if recoveries_done >= policy.max_recoveries:
        return Decision(None, why=f"not recovered: all {policy.max_recoveries} recoveries used")
    strategy = STRATEGIES.get(policy.strategy)
    if strategy is None:
        return Decision(None, why=f"unknown recovery strategy {policy.strategy!r}")
    options, skipped = candidates(policy, custom_job, home, strategy)
    if not options:
        return Decision(None, why="no placement left to try", skipped=skipped)
    if failure == Failure.PREEMPTION and in_place_done >= policy.retries_in_place:
        failure = Failure.STOCKOUT
    chosen = strategy.next(options, current, failure)
    return Decision(chosen, delay_s=backoff_s(policy, recoveries_done + 1, rng),
                    why=f"{strategy.name}: {failure} on {current.scheduling} in "
                        f"{current.region} -> {chosen.scheduling} in {chosen.region}",
                    skipped=skipped)
