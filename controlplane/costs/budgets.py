"""What a team's budget allows and what happens when its month's spend crosses it.

Submission: a job reserves its estimate for as long as Vertex may run it, its timeout (7 days
when it sets none), at the rate of its scheduling strategy. It is refused when that exceeds
what is left of the month: the budget less what ended jobs cost and what running jobs reserve
(their estimate, or their bill so far if larger). Setting a timeout is how a team fits a job
into what is left. The team's budget row is locked while the job is recorded, so two
submissions never both spend the same remainder.

Crossing: a periodic check (controlplane.costs.tasks.check_budgets) recomputes the bill of the
team's running jobs; once the month's billed spend is past the budget it acts once for that month
and that budget, as the team chose: cancel the running jobs (through controlplane.runs.lifecycle),
or only notify. What else a team runs (a sweep's trials) follows the same choice through the
app that owns it, registered with register_running (costs may not import those apps).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from controlplane.core import signals
from controlplane.costs import spend
from controlplane.costs.models import BudgetAction, BudgetCrossing, TeamBudget
from controlplane.runs import lifecycle
from controlplane.runs.models import ACTIVE_STATES, Job, JobKind
from controlplane.teams.models import Team
from vertexplan.pricing import format_usd

logger = logging.getLogger(__name__)
RATE_NOTE = " at its scheduling's rate"


class BudgetExceeded(ValueError):
    """A submission the team's budget cannot take; ``errors`` is keyed like a form's."""

    def __init__(self, message: str, *, estimate: int, left: int, budget: int,
                 committed: int) -> None:
        super().__init__(message)
        self.estimate, self.left, self.budget, self.committed = estimate, left, budget, committed
        self.errors = {"budget": [message]}

    def as_dict(self) -> dict[str, object]:
        return {"budget": [str(self)], "estimate_micros": self.estimate,
                "left_micros": self.left, "monthly_budget_micros": self.budget,
                "committed_micros": self.committed}


@dataclass(frozen=True)
class Standing:
    """A team's month: budget, billed spend, what running jobs reserve, and what is left."""

    budget: TeamBudget | None
    spent: int
    committed: int

    @property
    def left(self) -> int | None:
        return None if self.budget is None else self.budget.monthly_micros - self.committed

    @property
    def over(self) -> bool:
        return self.budget is not None and self.spent > self.budget.monthly_micros


def standing(team: Team) -> Standing:
    budget = TeamBudget.objects.filter(team=team).first()
    return Standing(budget, spend.month_spent(team), spend.month_committed(team))


def reserve(team: Team, estimate: int | None, hours: Decimal | None, *,
            unpriced_reason: str = "", subject: str = "this job", basis: str = "",
            advice: str = "set a shorter timeout_hours or wait for running jobs to end"
            ) -> None:
    """Called inside the transaction that records a job (or a sweep: SUBJECT, with how its
    estimate was made in BASIS and what fits it in ADVICE): raise BudgetExceeded when the
    team's budget cannot take ``estimate`` micro-dollars (None: it could not be priced)."""
    budget = TeamBudget.objects.select_for_update().filter(team=team).first()
    if budget is None:
        return
    committed = spend.month_committed(team)
    left = budget.monthly_micros - committed
    if estimate is None:
        raise BudgetExceeded(
            f"team {team.slug} has a monthly budget, and {subject} cannot be priced "
            f"({unpriced_reason or 'no prices'}): choose a priced region or resources",
            estimate=0, left=left, budget=budget.monthly_micros, committed=committed)
    if estimate > left:
        raise BudgetExceeded(
            f"over budget: {subject} may cost up to {format_usd(estimate)} "
            f"({basis or _hours(hours) + RATE_NOTE}), but team {team.slug} has "
            f"{format_usd(max(left, 0))} left of its {format_usd(budget.monthly_micros)} "
            "monthly budget "
            f"({format_usd(committed)} spent or reserved by running jobs this month); "
            f"{advice}",
            estimate=estimate, left=left, budget=budget.monthly_micros, committed=committed)


@dataclass(frozen=True)
class Crossed:
    """One crossing as the apps registered with register_running receive it: KEY names it
    (one per team, month and budget), CANCEL is the team's choice, MESSAGE what to tell."""

    team: Team
    key: str
    cancel: bool
    message: str
    spent_micros: int
    budget_micros: int


# Other things a team runs that a crossing acts on, as it acts on jobs (a sweep's trials),
# registered by the apps that own them (AppConfig.ready). Each cancels (through its own one
# cancel path) or notifies what it runs for the team, once per crossing's key, and returns
# the ids it acted on.
RunningHandler = Callable[[Crossed], list[int]]
_RUNNING: dict[str, RunningHandler] = {}


def register_running(name: str, handler: RunningHandler) -> None:
    _RUNNING[name] = handler


def _hours(hours: Decimal | None) -> str:
    if hours is None:
        return "its timeout"
    return f"{hours.normalize():f} h, its timeout,"


def check_crossings() -> list[BudgetCrossing]:
    """Act on every team whose month's spend has crossed its budget, once per crossing."""
    acted = []
    for budget in TeamBudget.objects.select_related("team"):
        team = budget.team
        active = list(Job.objects.filter(team=team, state__in=ACTIVE_STATES, kind=JobKind.JOB)
                      .values_list("pk", flat=True))
        spend.refresh_many(active)
        spent = spend.month_spent(team)
        if spent <= budget.monthly_micros:
            continue
        crossing = _record(budget, spent, active)
        if crossing is not None:
            acted.append(crossing)
    return acted


def _record(budget: TeamBudget, spent: int, active: list[int]) -> BudgetCrossing | None:
    month = spend.month_start()
    try:
        with transaction.atomic():
            crossing, created = BudgetCrossing.objects.get_or_create(
                team=budget.team, month=month, monthly_micros=budget.monthly_micros,
                defaults={"spent_micros": spent, "action": budget.on_exceed, "jobs": active,
                          "crossed_at": timezone.now()})
    except IntegrityError:
        return None  # recorded by a concurrent check: that one acts
    if not created:
        return None
    message = (f"team {budget.team.slug} has spent {format_usd(spent)} of its "
               f"{format_usd(budget.monthly_micros)} monthly budget")
    cancel = budget.on_exceed == BudgetAction.CANCEL
    message += "; its running jobs and sweeps are being cancelled" if cancel else \
        "; running jobs and sweeps go on (the team chose to be notified only)"
    logger.warning("%s", message)
    key = f"budget-{month:%Y-%m}-{budget.monthly_micros}"
    for job in Job.objects.filter(pk__in=active).select_related("team"):
        with transaction.atomic():
            signals.budget_crossed.send(
                sender=BudgetCrossing, job=job, key=key,
                detail={"message": message, "spent_micros": spent,
                        "budget_micros": budget.monthly_micros})
            job.events.create(kind="budget", attempt=job.attempt, data={
                "message": message, "action": budget.on_exceed, "spent_micros": spent,
                "budget_micros": budget.monthly_micros})
        if cancel:
            lifecycle.request_cancel(job.pk)
    crossed = Crossed(team=budget.team, key=key, cancel=cancel, message=message,
                      spent_micros=spent, budget_micros=budget.monthly_micros)
    for name, handler in _RUNNING.items():
        acted = handler(crossed)
        logger.info("budget crossing of team %s: %s acted on %s", budget.team.slug, name, acted)
    return crossing
