"""A sweep (one HyperparameterTuningJob) and its trials, as the control plane follows them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.runs.models import Job
from controlplane.teams.models import Team


class SweepState(models.TextChoices):
    QUEUED = "QUEUED"          # recorded, not yet created on Vertex
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    CANCELLING = "CANCELLING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class CancelReason(models.TextChoices):
    USER = "user", "Cancelled by a member of the team"
    BUDGET = "budget", "The team's monthly budget was crossed"


ACTIVE_STATES = (SweepState.QUEUED, SweepState.PENDING, SweepState.RUNNING,
                 SweepState.CANCELLING)
TERMINAL_STATES = (SweepState.SUCCEEDED, SweepState.FAILED, SweepState.CANCELLED)
# Vertex JobState -> the sweep's state.
VERTEX_STATES = {
    "JOB_STATE_QUEUED": SweepState.PENDING, "JOB_STATE_PENDING": SweepState.PENDING,
    "JOB_STATE_RUNNING": SweepState.RUNNING, "JOB_STATE_UPDATING": SweepState.RUNNING,
    "JOB_STATE_SUCCEEDED": SweepState.SUCCEEDED, "JOB_STATE_FAILED": SweepState.FAILED,
    "JOB_STATE_EXPIRED": SweepState.FAILED, "JOB_STATE_CANCELLING": SweepState.CANCELLING,
    "JOB_STATE_CANCELLED": SweepState.CANCELLED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": SweepState.SUCCEEDED,
}


def display_name_for(sweep_id: int) -> str:
    """Deterministic, so a retried submission finds what an earlier try created."""
    return contract_labels.sweep_display_name(sweep_id)


class Sweep(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="sweeps")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="sweeps")
    name = models.CharField(max_length=128)
    request = models.JSONField()          # the sweep request as given (clone prefills it)
    tuning_job = models.JSONField()       # the composed HyperparameterTuningJob (REST JSON)
    project = models.CharField(max_length=100)
    region = models.CharField(max_length=40)
    metric_id = models.CharField(max_length=64)   # the study's first metric: what "best" means
    goal = models.CharField(max_length=10)        # MINIMIZE | MAXIMIZE
    state = models.CharField(max_length=20, choices=SweepState.choices,
                             default=SweepState.QUEUED, db_index=True)
    state_changed_at = models.DateTimeField(default=timezone.now)
    error_message = models.TextField(blank=True)
    cancel_reason = models.CharField(max_length=10, choices=CancelReason.choices, blank=True)
    vertex_name = models.CharField(max_length=200, blank=True)
    vertex_state = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    reconciled_at = models.DateTimeField(null=True, blank=True)
    # Money in micro-dollars: one trial's hourly rate at the trial job's scheduling, the
    # estimate for every trial (max trials x trial hours), and the trials' actual running cost.
    trial_hourly_micros = models.BigIntegerField(null=True, blank=True)
    estimate_micros = models.BigIntegerField(null=True, blank=True)
    estimate_trial_hours = models.DecimalField(max_digits=9, decimal_places=3, null=True,
                                               blank=True)
    price_snapshot = models.JSONField(null=True, blank=True)
    cost_micros = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"sweep {self.pk} {self.name}"

    @property
    def display_name(self) -> str:
        return display_name_for(self.pk)

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    def best_trial(self) -> Trial | None:
        """The succeeded trial with the best final value of the study's first metric."""
        scored = [(t.objective, t) for t in self.trials.all()
                  if t.state == "SUCCEEDED" and t.objective is not None]
        if not scored:
            return None
        pick = min if self.goal == "MINIMIZE" else max
        return pick(scored, key=lambda pair: (pair[0]))[1]

    def update_state(self, state: str, *, error: str = "", vertex_name: str | None = None,
                     vertex_state: str | None = None, started_at: Any = None,
                     ended_at: Any = None, cancel_reason: str = "") -> bool:
        """The one place a sweep's state changes. Terminal states are final; returns whether
        anything changed. CANCEL_REASON: why a cancel was asked for (the first reason holds)."""
        fields: list[str] = []
        if vertex_name is not None and vertex_name != self.vertex_name:
            self.vertex_name = vertex_name
            fields.append("vertex_name")
        if vertex_state is not None and vertex_state != self.vertex_state:
            self.vertex_state = vertex_state
            fields.append("vertex_state")
        if started_at and not self.started_at:
            self.started_at = started_at
            fields.append("started_at")
        # A cancel asked for stays asked for until Vertex says the sweep ended.
        held = self.state == SweepState.CANCELLING and state in ACTIVE_STATES
        if state != self.state and not self.is_terminal and not held:
            self.state = state
            self.state_changed_at = timezone.now()
            fields += ["state", "state_changed_at"]
            if error:
                self.error_message = error[:4000]
                fields.append("error_message")
            if cancel_reason and not self.cancel_reason and state in (
                    SweepState.CANCELLING, SweepState.CANCELLED):
                self.cancel_reason = cancel_reason
                fields.append("cancel_reason")
            if state in TERMINAL_STATES:
                self.ended_at = ended_at or timezone.now()
                fields.append("ended_at")
        if fields:
            self.save(update_fields=fields)
        return bool(fields)


class SweepBudgetNotice(models.Model):
    """The sweep was told its team crossed its monthly budget (and cancelled, if the team chose
    that): once per crossing, which KEY names (controlplane.costs.budgets.Crossed)."""

    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="budget_notices")
    key = models.CharField(max_length=60)
    cancelled = models.BooleanField()   # the team's choice: cancel, or only notify
    message = models.TextField()
    spent_micros = models.BigIntegerField()
    budget_micros = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["sweep", "key"],
                                               name="one_budget_notice_per_crossing")]


class Trial(models.Model):
    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="trials")
    trial_id = models.CharField(max_length=40)
    number = models.PositiveIntegerField(default=0)   # for ordering: Vertex's ids are numbers
    state = models.CharField(max_length=20)           # Vertex Trial.State name
    parameters = models.JSONField(default=dict)
    final_metrics = models.JSONField(default=dict)
    final_step = models.PositiveBigIntegerField(null=True, blank=True)
    measurements = models.JSONField(default=list)     # [{"step", "metrics"}], as reported
    custom_job = models.CharField(max_length=200, blank=True)
    # The trial's own job (kind trial), made once it has a CustomJob: its log, loss curve,
    # checkpoints and page, as for any job (controlplane/sweeps/trial_jobs.py).
    job = models.OneToOneField(Job, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="sweep_trial")
    infeasible_reason = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["number", "trial_id"]
        constraints = [models.UniqueConstraint(fields=["sweep", "trial_id"],
                                               name="one_row_per_trial")]

    @property
    def objective(self) -> float | None:
        value = (self.final_metrics or {}).get(self.sweep.metric_id)
        return float(value) if isinstance(value, int | float) else None

    @property
    def custom_job_id(self) -> str:
        return self.custom_job.rsplit("/", 1)[-1] if self.custom_job else ""

    def update_from(self, remote: Any) -> bool:
        """The one place a trial changes: to what Vertex says of it (a RemoteTrial)."""
        values = {
            "state": remote.state, "parameters": remote.parameters,
            "final_metrics": remote.final_metrics, "final_step": remote.final_step,
            "measurements": remote.measurements, "custom_job": remote.custom_job,
            "infeasible_reason": remote.infeasible_reason[:4000],
            "started_at": remote.start_time, "ended_at": remote.end_time,
        }
        changed = [k for k, v in values.items() if getattr(self, k) != v]
        for key in changed:
            setattr(self, key, values[key])
        if changed and self.pk:
            self.save(update_fields=changed)
        return bool(changed)
