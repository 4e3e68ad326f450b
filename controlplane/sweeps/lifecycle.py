"""A sweep's life: recorded from a validated request, submitted exactly once, reconciled with
what Vertex says of it and its trials, cancelled. Tasks (tasks.py) call these with ids."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.base import RemoteTuningJob, get_backend
from controlplane.core import price_table
from controlplane.core.queue import enqueue
from controlplane.sweeps import trial_jobs
from controlplane.sweeps.models import (
    ACTIVE_STATES,
    VERTEX_STATES,
    CancelReason,
    Sweep,
    SweepState,
    Trial,
)
from controlplane.teams import job_policy
from controlplane.teams import policy as team_policy
from controlplane.teams import tracking as team_tracking
from controlplane.teams.models import Team
from vertexplan import composer
from vertexplan.digits import ascii_int
from vertexplan.pricing import job_estimate
from vertexplan.pricing.money import cost_of_seconds
from vertexplan.pricing.snapshot import snapshot as price_snapshot
from vertexplan.sweeps import SweepComposition, compose_sweep
from vertexplan.sweeps import estimate as sweep_estimate

logger = logging.getLogger(__name__)

SUBMIT_TASK = "controlplane.sweeps.tasks.submit_sweep"
CANCEL_TASK = "controlplane.sweeps.tasks.cancel_sweep"
# The estimate's trial duration when the request names none: the trial job's timeout, the
# most a trial can run (a ceiling, labelled so on the page).
TRIAL_HOURS_KEY = "trial_hours"
MAX_TRIAL_HOURS = Decimal(24 * 7)


@dataclass
class Checked:
    composition: SweepComposition
    region: str
    trial_hours: Decimal | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def _trial_hours(request: dict[str, Any], errors: dict[str, list[str]]) -> Decimal | None:
    raw = request.get(TRIAL_HOURS_KEY)
    if raw in (None, ""):
        return None
    try:
        hours = Decimal(str(raw))
    except ArithmeticError:
        hours = Decimal(-1)
    if not hours.is_finite() or not 0 < hours <= MAX_TRIAL_HOURS:
        errors[TRIAL_HOURS_KEY] = [f"must be a number of hours above 0, at most {MAX_TRIAL_HOURS}"]
        return None
    return hours


def check(request: Any, team: Team | None) -> Checked:
    """Compose and check a sweep request, its trial job held to the team's policy like any
    job (with a team); nothing is stored."""
    if not isinstance(request, dict):
        composition = SweepComposition(tuning_job={}, errors={"": ["expected a JSON object"]})
        return Checked(composition, settings.VERTEX_REGION, errors=composition.errors)
    composition = compose_sweep(request)
    errors = dict(composition.errors)
    trial = composition.trial
    if team is not None and trial is not None and trial.custom_job:
        for key, messages in job_policy.violations(trial.custom_job, trial.request.to_dict(),
                                                   team).items():
            errors.setdefault(f"trial_job.{key}", []).extend(messages)
    hours = _trial_hours(request, errors)
    # The trials run where the trial job does (its region read with it).
    region = trial.request.region if trial is not None else settings.VERTEX_REGION
    return Checked(composition, region, hours, errors)


def labels_for(sweep: Sweep) -> dict[str, str]:
    return contract_labels.sweep_labels(sweep.pk, sweep.team.slug)


@dataclass(frozen=True)
class Priced:
    """A checked sweep's price at its trial job's rate; the amounts are None (and
    ``unpriced`` says why) when the trial job cannot be priced."""

    hours: Decimal                  # per trial: the request's trial_hours, or the timeout
    hourly: int | None = None       # one trial
    estimate: int | None = None     # every trial
    snapshot: dict[str, Any] | None = None
    unpriced: str = ""


def price(checked: Checked) -> Priced:
    tuning_job = checked.composition.tuning_job
    hours = checked.trial_hours or price_table.timeout_hours(checked.composition.custom_job)
    try:
        priced = sweep_estimate(tuning_job, checked.region, hours, price_table.current_table())
    except job_estimate.PricingError as exc:
        return Priced(hours=hours, unpriced=str(exc))
    rate_name = priced.trial.rate_name
    return Priced(hours=hours,
                  hourly=priced.trial.hourly.get(rate_name) or priced.trial.hourly.on_demand,
                  estimate=priced.total.get(rate_name) or priced.total.on_demand,
                  snapshot=price_snapshot(priced.trial))


def record(*, team: Team, user: Any, request: dict[str, Any], checked: Checked,
           priced: Priced | None = None) -> Sweep:
    """Store a checked sweep with its estimate (PRICED, or priced now), and queue its
    submission after the commit."""
    tuning_job = checked.composition.tuning_job
    metric = tuning_job["studySpec"]["metrics"][0]
    priced = priced or price(checked)
    if priced.unpriced:
        logger.info("sweep for team %s is not priced: %s", team.slug, priced.unpriced)
    with transaction.atomic():
        sweep = Sweep.objects.create(
            team=team, created_by=user, name=str(request["display_name"])[:128],
            request=request, tuning_job=tuning_job, project=settings.VERTEX_PROJECT,
            region=checked.region, metric_id=metric["metricId"], goal=metric["goal"],
            trial_hourly_micros=priced.hourly, estimate_micros=priced.estimate,
            estimate_trial_hours=priced.hours, price_snapshot=priced.snapshot)
        enqueue(SUBMIT_TASK, str(sweep.pk))
    return sweep


def clone_request(sweep: Sweep) -> dict[str, Any]:
    body = {k: v for k, v in sweep.request.items() if v is not None}
    body["display_name"] = f"{sweep.name}-clone"[:128]
    body["team"] = sweep.team.slug
    return body


def output_uri(sweep: Sweep) -> str:
    """The sweep's folder under its team's output prefix; each trial writes in its own
    subfolder of it (Vertex's <base_output_directory>/<trial id>/)."""
    return f"{team_policy.effective(sweep.team).output_prefix}/sweep-{sweep.pk}"


def _body(sweep: Sweep) -> dict[str, Any]:
    """What is sent: the composed tuning job with the deterministic name, labels and the
    sweep's output folder (each trial writes under it, as for any job)."""
    body = dict(sweep.tuning_job)
    body["displayName"] = sweep.display_name
    body["labels"] = {**(body.get("labels") or {}), **labels_for(sweep)}
    trial = composer.for_attempt({"jobSpec": body["trialJobSpec"]},
                                 display_name=sweep.display_name, labels={},
                                 output_uri=output_uri(sweep))
    body["trialJobSpec"] = trial["jobSpec"]
    return body


def _with_tracking(body: dict[str, Any], team: Team) -> dict[str, Any]:
    """The trials log to the team's W&B project like its jobs (controlplane/teams/tracking.py):
    the key only in what is sent, never in what the sweep stores."""
    shown, secret = team_tracking.job_environment(team)
    trial = composer.with_env({"jobSpec": body["trialJobSpec"]}, {**shown, **secret})
    return {**body, "trialJobSpec": trial["jobSpec"]}


def _backend(sweep: Sweep):
    backend = get_backend()
    if sweep.region and sweep.region != backend.region and hasattr(backend, "for_region"):
        return backend.for_region(sweep.region)
    return backend


def submit(sweep_id: int) -> None:
    """Create the sweep's tuning job unless it exists already: exactly once."""
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().select_related("team").get(pk=sweep_id)
        if sweep.state != SweepState.QUEUED or sweep.vertex_name:
            return
        backend = _backend(sweep)
        try:
            remote = backend.find_tuning_job(sweep.display_name, labels_for(sweep))
            if remote is None:
                remote = backend.create_tuning_job(_with_tracking(_body(sweep), sweep.team))
        except (errors.InvalidJobSpec, errors.PermissionDenied, errors.QuotaExceeded) as exc:
            # As written it cannot run (or is refused): fail it now, say why.
            sweep.update_state(SweepState.FAILED, error=str(exc))
            return
        _apply(sweep, remote)


def _apply(sweep: Sweep, remote: RemoteTuningJob) -> None:
    """Vertex's view of the tuning job and its trials, into the rows (one transaction)."""
    known = {t.trial_id: t for t in sweep.trials.select_related("job")}
    spec: dict[str, Any] = {}

    def trial_spec() -> dict[str, Any]:
        if not spec:
            spec.update(_body(sweep)["trialJobSpec"])
        return spec

    for found in remote.trials:
        trial = known.get(found.id)
        if trial is None:
            trial = Trial(sweep=sweep, trial_id=found.id,
                          number=ascii_int(found.id) or 0)
            trial.update_from(found)
            trial.save()
        else:
            trial.update_from(found)
        trial_jobs.sync(sweep, trial, trial_spec)
    state = VERTEX_STATES.get(remote.state, SweepState.PENDING)
    error = remote.error_message if state == SweepState.FAILED else ""
    sweep.update_state(state, error=error, vertex_name=remote.name, vertex_state=remote.state,
                       started_at=remote.start_time, ended_at=remote.end_time)
    _update_cost(sweep)
    sweep.reconciled_at = timezone.now()
    sweep.save(update_fields=["reconciled_at"])


def _update_cost(sweep: Sweep) -> None:
    """Actual cost: each trial's running time at one trial's hourly rate (trials run as the
    same CustomJob)."""
    if not sweep.trial_hourly_micros:
        return
    now = timezone.now()
    seconds = sum(((t.ended_at or now) - t.started_at).total_seconds()
                  for t in sweep.trials.all() if t.started_at)
    cost = cost_of_seconds(sweep.trial_hourly_micros, Decimal(str(round(seconds, 3))))
    if cost != sweep.cost_micros:
        sweep.cost_micros = cost
        sweep.save(update_fields=["cost_micros"])


def reconcile(sweep_id: int) -> None:
    """Level-triggered: what Vertex says now, whatever happened before."""
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().select_related("team").get(pk=sweep_id)
        if sweep.state not in ACTIVE_STATES:
            return
        if not sweep.vertex_name:
            if sweep.state == SweepState.QUEUED:
                enqueue(SUBMIT_TASK, str(sweep.pk))  # a lost submit message
            return
        try:
            remote = _backend(sweep).get_tuning_job(sweep.vertex_name)
        except errors.NotFound:
            sweep.update_state(SweepState.FAILED, error="the tuning job is gone from Vertex")
            return
        _apply(sweep, remote)


def request_cancel(sweep_id: int, reason: str = CancelReason.USER) -> bool:
    """The one way a sweep is cancelled (its trials with it: Vertex cancels them with their
    tuning job): mark it, with why, and queue the call once. Returns whether it will be."""
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().get(pk=sweep_id)
        if sweep.state not in ACTIVE_STATES:
            return False
        if sweep.state == SweepState.CANCELLING:
            return True
        if not sweep.vertex_name:
            # A submit that runs later sees it.
            sweep.update_state(SweepState.CANCELLED, cancel_reason=reason)
            return True
        sweep.update_state(SweepState.CANCELLING, cancel_reason=reason)
        enqueue(CANCEL_TASK, str(sweep.pk))
    return True


def send_cancel(sweep_id: int) -> None:
    sweep = Sweep.objects.get(pk=sweep_id)
    if sweep.state != SweepState.CANCELLING or not sweep.vertex_name:
        return
    with contextlib.suppress(errors.FailedPrecondition, errors.NotFound):
        _backend(sweep).cancel_tuning_job(sweep.vertex_name)
