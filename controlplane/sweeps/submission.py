"""Creating a sweep: one path for the API, the request page and the compose app's sweep form.

A request is composed and checked (lifecycle.check: the study, the counts, the trial job with
every composer rule and the team's policy), then recorded for submission. A refused request
records nothing and says why, keyed by request field path ("parameters[1].max_value").
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from controlplane.costs import budgets
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team


class SweepRefused(ValueError):
    """A sweep request that cannot be created; ``errors`` is keyed by request field path."""

    def __init__(self, errors: dict[str, list[str]],
                 figures: dict[str, object] | None = None) -> None:
        super().__init__("; ".join(f"{k}: {m}" for k, ms in errors.items() for m in ms))
        self.errors = errors
        self.figures = figures  # a budget's refusal: its numbers, as a job's has them

    def as_dict(self) -> dict[str, object]:
        return self.figures or dict(self.errors)


def create_sweep(*, team: Team, user: Any, request: dict[str, Any],
                 checked: lifecycle.Checked | None = None) -> Sweep:
    """Check REQUEST for TEAM (unless CHECKED is its check already) and record the sweep.

    Raises SweepRefused (nothing is recorded) when it is not valid, or when the team's
    monthly budget cannot take its estimate (keyed "budget", as for a job)."""
    checked = checked if checked is not None else lifecycle.check(request, team)
    if not checked.ok:
        raise SweepRefused(checked.errors)
    priced = lifecycle.price(checked)
    trials = checked.composition.tuning_job.get("maxTrialCount")
    try:
        with transaction.atomic():
            # As a job reserves its estimate, a sweep reserves every trial's: the budget row
            # is locked while the sweep is recorded, so two submissions never both spend
            # the same remainder.
            budgets.reserve(
                team, priced.estimate, priced.hours, unpriced_reason=priced.unpriced,
                subject="this sweep",
                basis=f"{trials} trials x {priced.hours.normalize():f} h each",
                advice="give fewer trials, fewer hours per trial (trial_hours) or wait for "
                       "running jobs to end")
            return lifecycle.record(team=team, user=user, request=request, checked=checked,
                                    priced=priced)
    except budgets.BudgetExceeded as exc:
        raise SweepRefused(exc.errors, exc.as_dict()) from exc
