"""A runtime trial's record: the traffic and machine it measured a model under, its CustomJob,
each runtime's figures, and the runtime it chose (trials.py runs it; models.py imports this
module so Django finds the model). Apart from models.py, which is near its size limit."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from controlplane.serving.state_moves import move as _move


class RuntimeTrial(models.Model):
    class State(models.TextChoices):
        PENDING = "PENDING"      # its job not created yet
        RUNNING = "RUNNING"      # its job created, not ended
        SUCCEEDED = "SUCCEEDED"  # its figures read
        FAILED = "FAILED"

    model_entry = models.ForeignKey("serving.ModelEntry", on_delete=models.CASCADE,
                                    related_name="runtime_trials")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    # The machine the model is to be deployed on, which the trial's job runs on.
    machine_type = models.CharField(max_length=64)
    accelerator_type = models.CharField(max_length=64, blank=True)
    accelerator_count = models.PositiveSmallIntegerField(default=0)
    # The endpoint's expected traffic (vertexplan.runtime_choice.Traffic).
    prompt_tokens = models.PositiveIntegerField()
    output_tokens = models.PositiveIntegerField()
    concurrency = models.PositiveIntegerField()
    requests = models.PositiveIntegerField()
    p99_target_ms = models.PositiveIntegerField()
    runtimes = models.JSONField(default=list)  # the candidates, in the table's order
    # One replica's price an hour when the trial was asked (None: the table has none).
    hourly_micros = models.BigIntegerField(null=True, blank=True)

    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    job_name = models.CharField(max_length=300, blank=True)
    # Per runtime, as the job wrote them, plus cost_per_million_micros (runtime_choice).
    results = models.JSONField(default=list, blank=True)
    chosen_runtime = models.CharField(max_length=16, blank=True)
    choice_reason = models.CharField(max_length=300, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "serving"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"runtime trial {self.pk} of {self.model_entry_id}"

    def transition(self, new_state: str, **changes: Any) -> bool:
        """The one place a trial's state changes; returns whether it changed (see _move). An
        ended trial records when."""
        if new_state in (self.State.SUCCEEDED, self.State.FAILED):
            changes.setdefault("finished_at", timezone.now())
        return _move(self, _TRIAL_MOVES, new_state, changes)


_T = RuntimeTrial.State
_TRIAL_MOVES: dict[str, frozenset[str]] = {
    _T.PENDING: frozenset({_T.RUNNING, _T.FAILED}),
    _T.RUNNING: frozenset({_T.SUCCEEDED, _T.FAILED}),
    _T.SUCCEEDED: frozenset(),
    _T.FAILED: frozenset(),
}
