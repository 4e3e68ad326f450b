"""What a sweep costs: one trial's CustomJob priced like any job, times the trials it may run.

Vertex bills each trial as the CustomJob it runs (VERTEX_FACTS.md A1: trials run as
CustomJobs), so the estimate is max_trial_count x one trial for the hours given (a trial's
expected duration, or its timeout as the ceiling); the actual cost is the sum of the trials'.
Money in integer micro-dollars.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vertexplan.pricing import PriceTable, Totals
from vertexplan.pricing.job_estimate import Estimate, for_duration, hourly
from vertexplan.pricing.money import Quantity


@dataclass(frozen=True)
class SweepEstimate:
    trial: Estimate       # one trial's hourly price, line by line
    trial_hours: Quantity
    trials: int
    per_trial: Totals     # one trial for trial_hours
    total: Totals         # every trial


def estimate(tuning_job: dict[str, Any], region: str, trial_hours: Quantity,
             table: PriceTable | None = None) -> SweepEstimate:
    """Raises PricingError (vertexplan.pricing) when the trial job cannot be priced."""
    trial = hourly({"jobSpec": tuning_job.get("trialJobSpec") or {}}, region, table)
    trials = int(tuning_job.get("maxTrialCount") or 0)
    per_trial = for_duration(trial, trial_hours)
    return SweepEstimate(trial=trial, trial_hours=trial_hours, trials=trials,
                         per_trial=per_trial, total=per_trial.map(lambda v: v * trials))
