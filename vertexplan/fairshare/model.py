"""What the admission of jobs in front of Vertex reads and decides. Pure.

Capacity is counted per flavor: an accelerator family (a Vertex AcceleratorType) in a region,
spot and on-demand apart, as Vertex's quotas count them (contract/quota_metrics.py), in
accelerators or TPU chips. Each team holds a guarantee per flavor and may borrow beyond it up
to its borrowing limit; the teams form one cohort, so what one team does not use of its
guarantee the others may borrow, and take back (at a checkpoint) when they need it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# Lowest first: a job's rank is its index.
PRIORITIES = ("low", "normal", "high")


def rank(priority: str) -> int:
    return PRIORITIES.index(priority)


@dataclass(frozen=True, order=True)
class Flavor:
    family: str        # the AcceleratorType, e.g. NVIDIA_TESLA_A100, TPU_V5_LITEPOD
    region: str
    spot: bool = False  # SPOT and FLEX_START draw on the preemptible quota

    def label(self) -> str:
        return f"{self.family} in {self.region} ({'spot' if self.spot else 'on-demand'})"


@dataclass(frozen=True)
class TeamQuota:
    guarantee: int = 0
    # Accelerators over the guarantee the team may borrow from the cohort; None: no limit but
    # what the cohort has free.
    borrowing_limit: int | None = None

    @property
    def ceiling(self) -> float:
        if self.borrowing_limit is None:
            return float("inf")
        return self.guarantee + self.borrowing_limit


NO_QUOTA = TeamQuota()


@dataclass(frozen=True)
class Job:
    id: str
    team: str
    demand: Mapping[Flavor, int]  # accelerators held at once, per flavor
    priority: str = "normal"
    submitted_at: float = 0.0      # seconds; a requeued job keeps its first submission
    checkpointing: bool = True     # stops at a checkpoint when asked, losing nothing
    may_lose_work: bool = False    # its team's policy: preempt even without a checkpoint
    started_at: float | None = None  # running jobs: when this run started
    stopping: bool = False         # running jobs: already asked to stop at a checkpoint
    # The longest it may run (its timeout): lets smaller jobs start beside a held one when
    # they end before it could start; None: not known.
    limit_s: float | None = None
    # When it last entered the queue: a requeued job, when it was stopped for another; None:
    # submitted_at. Its age in the order stays submitted_at, but how long it has waited (and
    # so whether it starves) counts from here, else every job stopped after `reserve_after_s`
    # would come back starving and stop others in turn.
    queued_at: float | None = None

    def total(self) -> int:
        return sum(self.demand.values())

    def waiting_since(self) -> float:
        return self.submitted_at if self.queued_at is None else self.queued_at


@dataclass(frozen=True)
class State:
    now: float
    quotas: Mapping[str, Mapping[Flavor, TeamQuota]]  # team -> flavor -> quota
    # The project's Vertex quota per flavor (the Cloud Quotas API); a flavor absent here has no
    # known limit, so only the guarantees bound it.
    project_quota: Mapping[Flavor, int]
    running: Sequence[Job]
    waiting: Sequence[Job]
    # Accelerator-seconds each team used per flavor over the fair-share window.
    usage: Mapping[str, Mapping[Flavor, float]] = field(default_factory=dict)
    window_s: float = 7 * 24 * 3600.0
    # A job that has waited this long (since it last entered the queue) goes first, may ask
    # borrowing jobs of no higher priority to stop at a checkpoint, and (hold_when_starving)
    # holds its flavors: a job after it starts only if its limit_s ends before the held job
    # could start (by the running jobs' limits; jobs already stopping count as returning) or
    # it fits beside it (EASY backfill). One held back by its own team (a job without
    # checkpoints waiting for room in the guarantee, or a team at its ceiling) holds its
    # team's room instead: the team's other jobs of those flavors wait behind it. So a job
    # starts at the latest when the jobs running as it began to starve have ended: in the
    # week of bench.fair_share every job started within 18 h of waiting (6 h + the drain);
    # None: no job ever holds (the longest wait was 63-147 h).
    reserve_after_s: float | None = 6 * 3600.0
    hold_when_starving: bool = True
    # A borrowing job may also ask jobs of teams above their fair share to stop (at a
    # checkpoint), as a job within its guarantee may ask any borrowing job.
    fair_preemption: bool = True
    # A job that can stop at a checkpoint may also start on accelerators held for a starving
    # job when its limit runs past the hold (or is not known): it is asked to stop, as soon
    # as stopping the jobs started on the hold frees enough for the held one. The held job
    # starts one checkpoint later (at most), and the accelerators do not idle meanwhile.
    backfill_until_checkpoint: bool = True
    # Whether a starving job goes first across teams (True) or only in its own team, its team
    # ordered among the others by priority and share as any (False). Across teams, the team
    # with the most jobs queued has the most starving ones and so takes more than its share:
    # in bench.fair_share's contention week (seeds 38, 1, 2, 3) the share deviation was
    # 15-23% on and 10-18% off, but utilisation while waiting 92.4-92.6% on and 88-90% off.
    starving_orders_teams: bool = True
    # What the accelerators a team holds now weigh in its share, beside the window's average
    # (1: as much). Lower, the order follows the usage already spent more than the jobs just
    # started: bench.fair_share measured, without priorities or the starvation rule, 4.6-11.9%
    # share deviation at 0.2 against 11.0-24.0% at 1 (seeds 38, 1-3; bench/README.md).
    held_now_weight: float = 1.0

    def quota(self, team: str, flavor: Flavor) -> TeamQuota:
        return self.quotas.get(team, {}).get(flavor, NO_QUOTA)


@dataclass(frozen=True)
class Preemption:
    job_id: str
    for_job_id: str
    # Accelerator-seconds of work lost: 0 for a job that stops at a checkpoint.
    lost_accelerator_s: float = 0.0


@dataclass(frozen=True)
class Waiting:
    job_id: str
    place: int   # 1 = the next to be admitted
    reason: str
    # The soonest it could start by the running jobs' time limits (their timeouts) alone: the
    # jobs ahead of it may make it later. None: a running job's limit is not known.
    earliest_start: float | None = None


@dataclass(frozen=True)
class Refusal:
    job_id: str
    reason: str


@dataclass
class Decisions:
    admit: list[str] = field(default_factory=list)
    preempt: list[Preemption] = field(default_factory=list)
    waiting: list[Waiting] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def reason(self, job_id: str) -> str | None:
        return next((w.reason for w in self.waiting if w.job_id == job_id), None)


class TooBig(ValueError):
    """A job that needs more of a flavor than the whole project's quota: it can never run."""

    def __init__(self, flavor: Flavor, need: int, quota: int, what: str = "") -> None:
        self.flavor, self.need, self.quota = flavor, need, quota
        what = what or "the project's whole Vertex quota; it could never start:"
        super().__init__(f"the job needs {need} {flavor.label()} at once but {quota} is "
                         f"{what} use at most {quota}")


def check_fits_project(demand: Mapping[Flavor, int], project_quota: Mapping[Flavor, int]) -> None:
    """Raise TooBig when the demand exceeds the project's quota of any flavor."""
    for flavor, need in sorted(demand.items()):
        quota = project_quota.get(flavor)
        if quota is not None and need > quota:
            raise TooBig(flavor, need, quota)
