"""Creating jobs: a validated request is priced, its team's budget reserved, and the job
recorded for submission, in one transaction, whether it comes from the form, the API, a clone
or a resubmission from a checkpoint."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from controlplane.compose import validation
from controlplane.core import price_table
from controlplane.costs import budgets
from controlplane.runs import lifecycle
from controlplane.runs.lifecycle import RESUME_ENV, clone_request
from controlplane.runs.models import Job
from controlplane.teams.models import Team
from vertexplan import composer


def create_job(*, team: Team, user: Any, request: dict[str, Any],
               composition: composer.Composition,
               resubmitted_from: Job | None = None, resume: tuple[int | None, str] = (None, ""),
               ) -> Job:
    """Price a validated job, reserve it from its team's budget and record it for submission.

    Raises BudgetExceeded (nothing is recorded) when the team's month cannot take it."""
    region = request.get("region") or settings.VERTEX_REGION
    priced, unpriced = price_table.price_job(composition.custom_job, region)
    with transaction.atomic():
        budgets.reserve(team, priced.micros if priced else None,
                        priced.hours if priced else None, unpriced_reason=unpriced)
        return lifecycle.record_job(team=team, user=user, request=request,
                                    composition=composition, priced=priced,
                                    resubmitted_from=resubmitted_from, resume=resume)


def resubmit_request(job: Job, checkpoint_path: str, name: str = "") -> dict[str, Any]:
    """The request of a new job that starts from `checkpoint_path` of `job`: the same job, with
    CP_RESUME_FROM telling the trainer where to start while its own folder is empty."""
    body = clone_request(job)
    body.pop("team", None)
    body["name"] = (name or f"{job.name}-resumed")[:100]
    body["env"] = {**(job.request.get("env") or {}), RESUME_ENV: checkpoint_path}
    return body


class ResubmitError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(str(errors))
        self.errors = errors


def resubmit(job: Job, *, user: Any, checkpoint_step: int | None = None, name: str = "") -> Job:
    """A new job from one of `job`'s checkpoints (the newest when no step is given)."""
    saved = job.events.filter(kind="checkpoint_saved").order_by("-step", "-timestamp")
    if checkpoint_step is not None:
        saved = saved.filter(step=checkpoint_step)
    checkpoint = saved.first()
    if checkpoint is None or not checkpoint.data.get("path"):
        steps = sorted({e.step for e in job.events.filter(kind="checkpoint_saved")
                        if e.step is not None})
        raise ResubmitError({"checkpoint_step": [
            f"no such checkpoint; this job saved: {steps or 'none'}"]})
    path = checkpoint.data["path"]
    checked = validation.check(resubmit_request(job, path, name), job.team)
    if not checked.ok:
        raise ResubmitError(checked.errors)
    try:
        return create_job(team=job.team, user=user, request=checked.request,
                          composition=checked.composition, resubmitted_from=job,
                          resume=(checkpoint.step, path))
    except budgets.BudgetExceeded as exc:
        raise ResubmitError(exc.errors) from exc
