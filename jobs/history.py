"""What happened to a job's replicas: every restart and preemption, derived from its logs.

jobs/restarts.py fills this table from the events and log lines the follower stores (and from
the backend's final error); it is rebuilt idempotently, so one row per restart, however often
detection runs.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class RestartCause(models.TextChoices):
    PREEMPTION = "preemption", "spot preemption"
    STOCKOUT = "stockout", "stockout"
    CRASH = "crash", "replica exited with an error"
    BACKEND = "backend", "the backend restarted"
    UNKNOWN = "restart", "restart"


class JobRestart(models.Model):
    """One run of one replica that ended and (usually) started over.

    `ordinal` is the number of the run that ended (1 = the replica's first run in the attempt),
    so a row is found again, not duplicated, each time detection runs.
    """

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="restart_records")
    attempt = models.PositiveIntegerField()
    replica = models.CharField(max_length=40, blank=True)
    ordinal = models.PositiveIntegerField()
    cause = models.CharField(max_length=12, choices=RestartCause.choices)
    signal = models.CharField(max_length=200, blank=True)  # the line or event that said so
    occurred_at = models.DateTimeField()
    detected_at = models.DateTimeField(default=timezone.now)
    # Where the run was when it stopped, and the emergency checkpoint it wrote, if any.
    step = models.PositiveIntegerField(null=True, blank=True)
    checkpoint_path = models.CharField(max_length=1024, blank=True)
    # The run after it: when it started and the checkpoint it resumed from.
    resumed_at = models.DateTimeField(null=True, blank=True)
    resumed_from_step = models.PositiveIntegerField(null=True, blank=True)
    resumed_from_path = models.CharField(max_length=1024, blank=True)
    checkpoint = models.ForeignKey("jobs.JobEvent", null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    steps_lost = models.PositiveIntegerField(null=True, blank=True)
    sources = models.JSONField(default=list)

    class Meta:
        ordering = ["occurred_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "attempt", "replica", "ordinal"],
                                    name="one_row_per_replica_run"),
        ]

    def __str__(self) -> str:
        return f"{self.cause} of {self.replica or 'the job'} (attempt {self.attempt})"

    @property
    def resumed(self) -> bool:
        return self.resumed_at is not None
