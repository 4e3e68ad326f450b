"""What a sweep would cost before it is submitted: one trial priced as the compose page prices
a job (estimates.estimate_of_checked: per hour and for the trial's hours, at every rate), then
the whole sweep, max trials x one trial, and what its parallel trials burn per hour.

Vertex bills each trial as the CustomJob it runs (VERTEX_FACTS.md A1), so this is the same
arithmetic as the sweep's stored estimate (vertexplan.sweeps.cost): one rounding per trial,
times the trials. Money in integer micro-dollars.
"""

from __future__ import annotations

from typing import Any

from controlplane.compose import validation
from controlplane.compose.estimates import estimate_of_checked
from controlplane.sweeps import lifecycle
from controlplane.teams.models import Team
from vertexplan.pricing import RATE_NAMES


def _times(totals: dict[str, int | None], count: int) -> dict[str, int | None]:
    return {rate: None if totals.get(rate) is None else totals[rate] * count
            for rate in RATE_NAMES}


def sweep_estimate(checked: lifecycle.Checked, team: Team | None) -> dict[str, Any] | None:
    """The trial's estimate (the compose panel's shape) with ``sweep``: the whole sweep's
    total and the parallel trials' hourly burn, when the counts are valid. None when there
    is no valid trial job to price; ``error`` when it cannot be priced."""
    trial = checked.composition.trial
    if trial is None or not trial.custom_job or any(
            key == "trial_job" or key.startswith("trial_job.") for key in checked.errors):
        return None
    as_job = validation.CheckedRequest(request=trial.request, composition=trial, team=team)
    estimate = estimate_of_checked(as_job, checked.trial_hours, team)
    if estimate is None or estimate.get("error"):
        return estimate
    # The same work on other accelerators is a job's question; a sweep's trials are one job.
    estimate["alternatives"] = []
    tuning_job = checked.composition.tuning_job
    trials, parallel = tuning_job.get("maxTrialCount"), tuning_job.get("parallelTrialCount")
    if isinstance(trials, int) and isinstance(parallel, int):
        estimate["sweep"] = {
            "max_trials": trials, "parallel_trials": parallel,
            "total": _times(estimate["total"], trials),
            "parallel_hourly": _times(estimate["hourly"], parallel),
            "ceiling": _times(estimate["ceiling"]["total"], trials),
        }
    return estimate
