"""Creating jobs: a validated request is priced, its team's budget reserved, and the job
recorded for submission, in one transaction, whether it comes from the form, the API, a clone
or a resubmission from a checkpoint."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from controlplane.backends import storage
from controlplane.backends.errors import BackendError
from controlplane.compose import validation
from controlplane.core import price_table
from controlplane.costs import budgets
from controlplane.logs import framework_lines
from controlplane.runs import checkpoints, lifecycle
from controlplane.runs.lifecycle import RESUME_ENV, clone_request
from controlplane.runs.models import Job
from controlplane.teams.models import Team
from vertexplan.composer import JobRequest, resume_flags
from vertexplan.logparse.frameworks import hf_trainer
from vertexplan.logparse.frameworks.registry import JobState

# The frameworks whose runs are HF Trainer scripts (their checkpoints hold trainer_state.json).
HF_TRAINER_RUNS = frozenset({"hf_trainer", "accelerate", "deepspeed"})


def create_job(*, team: Team, user: Any, checked: validation.CheckedRequest,
               resubmitted_from: Job | None = None, resume: tuple[int | None, str] = (None, ""),
               ) -> Job:
    """Price a validated job, reserve it from its team's budget and record it for submission.

    Raises BudgetExceeded (nothing is recorded) when the team's month cannot take it."""
    composition = checked.composition
    if not checked.ok or composition is None:
        raise ValueError(f"only a valid job is created: {checked.errors}")
    priced, unpriced = price_table.price_job(composition.custom_job, composition.request.region)
    with transaction.atomic():
        budgets.reserve(team, priced.micros if priced else None,
                        priced.hours if priced else None, unpriced_reason=unpriced)
        return lifecycle.record_job(team=team, user=user, composition=composition,
                                    priced=priced, resubmitted_from=resubmitted_from,
                                    resume=resume)


def resubmit_request(job: Job, checkpoint_path: str, name: str = "",
                     framework: str | None = None) -> JobRequest:
    """The request of a new job that starts from `checkpoint_path` of `job`: the same job, with
    CP_RESUME_FROM telling the product's trainer where to start while its own folder is empty,
    and a team's own framework's resume argument (`framework`) added to its arguments."""
    body = clone_request(job)
    body.pop("team", None)
    body["name"] = (name or f"{job.name}-resumed")[:100]
    body["env"] = {**(job.request.get("env") or {}), RESUME_ENV: checkpoint_path}
    args = resume_flags.resume_args(framework, list(body.get("args") or []), checkpoint_path)
    if args is not None:
        body["args"] = args
    return validation.read_request(body)


class ResubmitError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(str(errors))
        self.errors = errors


def resubmit(job: Job, *, user: Any, checkpoint_step: int | None = None, name: str = "") -> Job:
    """A new job from one of `job`'s checkpoints (the newest when no step is given).

    Only a checkpoint that still exists is offered (rotation's deletions are left out), and it
    is looked at on storage now: a resubmission from a deleted or half-written one is refused
    here, not found out by the trainer after the machines are paid for."""
    existing = checkpoints.existing(job)
    if checkpoint_step is None:
        checkpoint = existing[0] if existing else None
    else:
        checkpoint = next((c for c in existing if c.step == checkpoint_step), None)
    if checkpoint is None:
        steps = sorted(c.step for c in existing)
        deleted = checkpoint_step is not None and job.events.filter(
            kind="checkpoint_deleted", step=checkpoint_step).exists()
        why = (f"the checkpoint of step {checkpoint_step} was deleted by rotation"
               if deleted else "no such checkpoint")
        raise ResubmitError({"checkpoint_step": [
            f"{why}; this job's checkpoints that still exist: {steps or 'none'}"]})
    told = framework_lines.report(job)
    framework = told["name"] if told else None
    resume = resume_flags.RESUMES.get(framework or "")
    try:
        found = storage.check_checkpoint(checkpoint.path, resume.marker if resume else
                                         storage.MARKER)
    except BackendError as exc:
        raise ResubmitError({"checkpoint_step": [f"cannot check the checkpoint: {exc}"]}) \
            from exc
    if not found.complete:
        raise ResubmitError({"checkpoint_step": [f"cannot resume from step {checkpoint.step}: "
                                                 f"{found.why}"]})
    path = checkpoint.path
    checked = validation.check(resubmit_request(job, path, name, framework), job.team)
    if not checked.ok:
        raise ResubmitError(checked.errors)
    known = _trainer_state(framework, path)
    try:
        with transaction.atomic():
            created = create_job(team=job.team, user=user, checked=checked,
                                 resubmitted_from=job, resume=(checkpoint.step, path))
            if known is not None and framework is not None:
                framework_lines.seed(created, framework, known)
            return created
    except budgets.BudgetExceeded as exc:
        raise ResubmitError(exc.errors) from exc


def _trainer_state(framework: str | None, path: str) -> JobState | None:
    """What an HF Trainer checkpoint's trainer_state.json tells the new run's recognizer (its
    logging interval and total, exact from the first line); None where there is none."""
    if framework not in HF_TRAINER_RUNS:
        return None
    try:
        found = hf_trainer.from_trainer_state(storage.read_small(path, "trainer_state.json"))
    except BackendError:
        return None  # the recognizer then learns the interval from the checkpoints, as always
    if found is None:
        return None
    state = JobState(framework=framework)
    state.states[hf_trainer.NAME] = found
    return state
