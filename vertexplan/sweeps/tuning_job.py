"""A sweep request -> the HyperparameterTuningJob that JobService.CreateHyperparameterTuningJob
takes (REST JSON), its trial job composed like any job.

A sweep request is a study (``study.py``), the trial counts, and ``trial_job``: a job request
(vertexplan/composer/request.py) that the composer turns into the trials' CustomJobSpec with
every one of its rules. Vertex adds each trial's parameters to that job's arguments as
``--<parameter_id>=<value>`` (VERTEX_FACTS.md A1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vertexplan import composer
from vertexplan.sweeps.study import Errors, grid_size, study_spec

# Trial caps are UNCONFIRMED (VERTEX_FACTS.md A1): these bound what the product submits.
MAX_TRIALS = 1000
MAX_PARALLEL = 100
MAX_DISPLAY_NAME = 128
COUNT_FIELDS = ("max_trial_count", "parallel_trial_count", "max_failed_trial_count")


@dataclass
class SweepComposition:
    tuning_job: dict[str, Any]
    errors: Errors = field(default_factory=dict)
    warnings: Errors = field(default_factory=dict)
    trial: composer.Composition | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def custom_job(self) -> dict[str, Any]:
        """One trial's CustomJob (what the pricing reads)."""
        return {"jobSpec": self.tuning_job.get("trialJobSpec") or {}}


def _counts(request: dict[str, Any], errors: Errors) -> dict[str, int]:
    out: dict[str, int] = {}
    limits = {"max_trial_count": (1, MAX_TRIALS), "parallel_trial_count": (1, MAX_PARALLEL),
              "max_failed_trial_count": (0, MAX_TRIALS)}
    for name in COUNT_FIELDS:
        value = request.get(name, 0 if name == "max_failed_trial_count" else None)
        low, high = limits[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            extra = " (0 = Vertex decides)" if name == "max_failed_trial_count" else ""
            errors.setdefault(name, []).append(
                f"must be a whole number from {low} to {high}{extra}")
        else:
            out[name] = value
    if out.get("parallel_trial_count", 0) > out.get("max_trial_count", MAX_TRIALS):
        errors.setdefault("parallel_trial_count", []).append(
            f"at most max_trial_count ({out['max_trial_count']})")
    return out


def compose_sweep(request: dict[str, Any], *, memory_policy: str = "refuse") -> SweepComposition:
    """Build and check the tuning job. Errors are keyed by request field; the trial job's are
    under ``trial_job.`` (``trial_job.chief.machine_type``)."""
    errors: Errors = {}
    warnings: Errors = {}
    name = request.get("display_name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_DISPLAY_NAME:
        errors["display_name"] = [f"give a name of 1 to {MAX_DISPLAY_NAME} characters"]
    study = study_spec(request, errors)
    counts = _counts(request, errors)
    trial_request = request.get("trial_job")
    trial: composer.Composition | None = None
    trial_spec: dict[str, Any] = {}
    if not isinstance(trial_request, dict):
        errors["trial_job"] = ["give the trial's job request (the compose fields as an object)"]
    else:
        # A trial has no name of its own: Vertex names its CustomJobs after the sweep.
        trial_request = {**trial_request, "name": name if isinstance(name, str) and name.strip()
                         else "trial"}
        trial = composer.compose(composer.JobRequest.from_dict(trial_request),
                                 memory_policy=memory_policy)
        trial_spec = trial.custom_job.get("jobSpec") or {}
        for key, messages in trial.errors.items():
            errors.setdefault(f"trial_job.{key}" if key else "trial_job", []).extend(messages)
        for key, messages in trial.warnings.items():
            warnings.setdefault(f"trial_job.{key}" if key else "trial_job", []).extend(messages)
    if study.get("algorithm") == "GRID_SEARCH" and "max_trial_count" in counts:
        points = grid_size(study["parameters"])
        if points is not None and counts["max_trial_count"] > points:
            warnings.setdefault("max_trial_count", []).append(
                f"the grid has {points} points: GRID_SEARCH runs at most that many trials")
    tuning_job: dict[str, Any] = {
        "displayName": name,
        "studySpec": study,
        "maxTrialCount": counts.get("max_trial_count"),
        "parallelTrialCount": counts.get("parallel_trial_count"),
        "maxFailedTrialCount": counts.get("max_failed_trial_count", 0),
        "trialJobSpec": trial_spec,
    }
    labels = (trial.custom_job.get("labels") if trial is not None else None) or {}
    if labels:
        tuning_job["labels"] = labels
    return SweepComposition(tuning_job=tuning_job, errors=errors, warnings=warnings, trial=trial)

