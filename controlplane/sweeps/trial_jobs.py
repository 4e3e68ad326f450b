"""Each trial's own job (Job kind trial): made once the trial has a CustomJob, with one
attempt that names it, so the log follower (controlplane/logs/follower.py) reads its output
like any attempt's and its steps, checkpoints, failures and logs land in the one log store and
on a job page. The sweep runs the trial: this job is never submitted, reconciled or billed as
a job; its state follows the trial's through Job.update_state.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from controlplane.runs.models import Job, JobAttempt, JobKind, JobState
from controlplane.sweeps.models import Sweep, SweepState, Trial

# Vertex's Trial.State -> the trial job's state. INFEASIBLE (its CustomJob failed, reported no
# metric, or the sweep stopped it) is FAILED, or CANCELLED when the sweep was cancelled.
TRIAL_STATES: dict[str, str] = {
    "REQUESTED": JobState.QUEUED,
    "ACTIVE": JobState.RUNNING,
    "STOPPING": JobState.RUNNING,
    "SUCCEEDED": JobState.SUCCEEDED,
    "INFEASIBLE": JobState.FAILED,
}
SOURCE = "sweep"


def job_name(sweep: Sweep, trial: Trial) -> str:
    suffix = f"-trial-{trial.trial_id}"
    return f"{sweep.name[:100 - len(suffix)]}{suffix}"


def trial_custom_job(sweep: Sweep, trial: Trial, trial_spec: dict[str, Any]) -> dict[str, Any]:
    """The trial's CustomJob as the sweep sent it: the trial job spec, writing under
    <the sweep's output folder>/<trial id>/ as Vertex has a trial do, so its checkpoints are
    checked against that folder (controlplane/logs/trust.py)."""
    spec = dict(trial_spec)
    base = ((spec.get("baseOutputDirectory") or {}).get("outputUriPrefix") or "").rstrip("/")
    if base:
        spec["baseOutputDirectory"] = {"outputUriPrefix": f"{base}/{trial.trial_id}/"}
    return {"displayName": job_name(sweep, trial), "jobSpec": spec}


def _create(sweep: Sweep, trial: Trial, trial_spec: dict[str, Any]) -> Job:
    now = timezone.now()
    job = Job.objects.create(
        team=sweep.team, created_by=sweep.created_by, name=job_name(sweep, trial),
        kind=JobKind.TRIAL,
        # The trial job's request (so the list's accelerator filter reads it as a job's), and
        # the trial's parameters.
        request={**(sweep.request.get("trial_job") or {}), "sweep": sweep.pk,
                 "trial": trial.trial_id, "parameters": trial.parameters},
        custom_job=trial_custom_job(sweep, trial, trial_spec), project=sweep.project,
        region=sweep.region, created_at=trial.started_at or now)
    JobAttempt.objects.create(
        job=job, number=1, display_name=trial.custom_job_id[:128],
        vertex_name=trial.custom_job, vertex_job_id=trial.custom_job_id[:40],
        region=sweep.region, submitted_at=trial.started_at or now, created_at=now)
    job.events.create(kind="state", attempt=1, timestamp=trial.started_at or now,
                      data={"from": "", "to": JobState.QUEUED, "source": "created",
                            "sweep": sweep.pk, "trial": trial.trial_id})
    trial.job = job
    trial.save(update_fields=["job"])
    return job


def _target_state(sweep: Sweep, trial: Trial) -> str:
    state = TRIAL_STATES.get(trial.state, JobState.QUEUED)
    if state == JobState.FAILED and sweep.state in (SweepState.CANCELLING,
                                                   SweepState.CANCELLED):
        return JobState.CANCELLED
    return state


def _follow_trial(job: Job, sweep: Sweep, trial: Trial) -> None:
    """The trial job's state, start and end, and its attempt's, as the trial's now."""
    target = _target_state(sweep, trial)
    if target != job.state and not job.is_terminal:
        job = Job.objects.select_for_update().get(pk=job.pk)
        if target in (JobState.RUNNING, JobState.SUCCEEDED, JobState.FAILED) and \
                trial.started_at and job.started_at is None:
            job.update_state(JobState.RUNNING, at=trial.started_at, source=SOURCE)
        error = trial.infeasible_reason if target in (JobState.FAILED,
                                                      JobState.CANCELLED) else ""
        at = trial.ended_at if target in (JobState.SUCCEEDED, JobState.FAILED,
                                          JobState.CANCELLED) else trial.started_at
        job.update_state(target, at=at, error=error, source=SOURCE)
    _follow_attempt(job, trial)


def _follow_attempt(job: Job, trial: Trial) -> None:
    # The follower closes the attempt's log once its end is read past.
    values: dict[str, datetime | str | None] = {
        "vertex_state": trial.state, "started_at": trial.started_at,
        "ended_at": trial.ended_at,
        "error_message": trial.infeasible_reason if trial.state == "INFEASIBLE" else ""}
    JobAttempt.objects.filter(job=job, number=1).exclude(**values).update(**values)


def sync(sweep: Sweep, trial: Trial, trial_spec: Callable[[], dict[str, Any]]) -> Job | None:
    """Make the trial's job the first time it has a CustomJob (once: the caller holds the
    sweep's row lock, and the job is on the trial row), then keep it in step with the trial.
    `trial_spec` gives the sweep's trial job spec as sent (read only when a job is made)."""
    if trial.job_id is None:
        if not trial.custom_job:
            return None
        job = _create(sweep, trial, trial_spec())
    else:
        job = trial.job
    _follow_trial(job, sweep, trial)
    return job


def origin(job: Job) -> dict[str, str] | None:
    """What a trial's job is part of, for its page and API record (runs.panels.origin)."""
    trial = Trial.objects.filter(job=job).select_related("sweep").first()
    if trial is None:
        return None
    sweep = trial.sweep
    return {"kind": "trial", "label": f"trial {trial.trial_id} of sweep {sweep.name}",
            "url": reverse("sweep-detail", args=[sweep.pk]) + f"#trial-{trial.trial_id}",
            "api": reverse("api-sweep-detail", args=[sweep.pk])}
