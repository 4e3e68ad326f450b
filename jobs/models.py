"""The control plane's records: teams, jobs and their attempts, and what the logs told us."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="one_role_per_team")]

    @property
    def can_submit(self) -> bool:
        return self.role in (Role.ADMIN, Role.MEMBER)

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class JobState(models.TextChoices):
    QUEUED = "QUEUED"          # accepted; no CustomJob yet, or Vertex has it queued
    PENDING = "PENDING"        # Vertex is provisioning machines
    RUNNING = "RUNNING"
    CANCELLING = "CANCELLING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
ACTIVE_STATES = frozenset(set(JobState) - TERMINAL_STATES)

# Which moves are legal. A terminal state is final: late or reordered observations of an
# earlier state (a reconcile that read Vertex before the job ended) are ignored, never applied.
_ALLOWED: dict[str, frozenset[str]] = {
    JobState.QUEUED: frozenset(ACTIVE_STATES | TERMINAL_STATES) - {JobState.QUEUED},
    JobState.PENDING: frozenset({JobState.QUEUED, JobState.RUNNING, JobState.CANCELLING}
                                | TERMINAL_STATES),
    JobState.RUNNING: frozenset({JobState.QUEUED, JobState.PENDING, JobState.CANCELLING}
                                | TERMINAL_STATES),
    JobState.CANCELLING: frozenset(TERMINAL_STATES),
    JobState.SUCCEEDED: frozenset(),
    JobState.FAILED: frozenset(),
    JobState.CANCELLED: frozenset(),
}


class Job(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="jobs")
    name = models.CharField(max_length=100)
    # What the user asked for (the composer's input) and what it became (Vertex REST JSON,
    # without the per-attempt display name and labels).
    request = models.JSONField()
    custom_job = models.JSONField()
    project = models.CharField(max_length=100)
    region = models.CharField(max_length=40)

    state = models.CharField(max_length=12, choices=JobState.choices, default=JobState.QUEUED,
                             db_index=True)
    state_changed_at = models.DateTimeField(default=timezone.now)
    error_message = models.TextField(blank=True)
    attempt = models.PositiveIntegerField(default=1)
    restarts = models.PositiveIntegerField(default=0)

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    # Progress, denormalised from step events so lists need no aggregate queries.
    last_step = models.PositiveIntegerField(null=True, blank=True)
    total_steps = models.PositiveIntegerField(null=True, blank=True)
    last_loss = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["team", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def display_name(self) -> str:
        return display_name_for(self.pk, self.attempt)

    @property
    def output_uri(self) -> str:
        # Shared by every attempt, so a new attempt resumes from the previous one's checkpoints.
        return f"{settings.CP_OUTPUT_URI}/{self.team.slug}/job-{self.pk}"

    def current_attempt(self) -> JobAttempt | None:
        return self.attempts.filter(number=self.attempt).first()

    def update_state(
        self,
        new_state: str,
        *,
        at: datetime | None = None,
        error: str = "",
        source: str = "",
    ) -> bool:
        """The one place a job's state changes. Returns whether it changed.

        The caller holds the row lock (select_for_update) so two workers never interleave.
        Records the change on the job's timeline.
        """
        if new_state == self.state or new_state not in _ALLOWED[self.state]:
            return False
        at = at or timezone.now()
        old = self.state
        self.state = new_state
        self.state_changed_at = at
        if new_state == JobState.RUNNING and self.started_at is None:
            self.started_at = at
        if new_state in TERMINAL_STATES:
            self.ended_at = at
        if error:
            self.error_message = error
        self.save(update_fields=["state", "state_changed_at", "started_at", "ended_at",
                                 "error_message"])
        JobEvent.objects.create(
            job=self, attempt=self.attempt, kind="state", timestamp=at,
            data={"from": old, "to": new_state, "error": error, "source": source},
        )
        return True


def display_name_for(job_id: int, attempt: int) -> str:
    """Deterministic, so a retried submission finds the CustomJob an earlier try created."""
    return f"cp-{job_id}-a{attempt}"


class JobAttempt(models.Model):
    """One CustomJob on Vertex. A job has one per submission (recovery adds more)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    display_name = models.CharField(max_length=128)
    vertex_name = models.CharField(max_length=200, blank=True)
    # The numeric id in the resource name: Cloud Logging's resource.labels.job_id.
    vertex_job_id = models.CharField(max_length=40, blank=True, db_index=True)
    vertex_state = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    error_message = models.TextField(blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["job", "number"], name="one_row_per_attempt"),
        ]

    def __str__(self) -> str:
        return self.display_name


class JobEvent(models.Model):
    """A point on a job's timeline: state changes and the trainer's structured events."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    attempt = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=40)
    timestamp = models.DateTimeField(default=timezone.now)
    replica = models.CharField(max_length=40, blank=True)
    step = models.PositiveIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)
    # The log entry it came from; empty for events the control plane itself records.
    insert_id = models.CharField(max_length=128, blank=True)

    class Meta:
        ordering = ["timestamp", "id"]
        indexes = [models.Index(fields=["job", "timestamp"])]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "insert_id"], condition=~models.Q(insert_id=""),
                name="event_once_per_log_entry",
            ),
        ]


class StepMetric(models.Model):
    """One row per training step reported by rank 0: the source of the loss curve."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="steps")
    attempt = models.PositiveIntegerField(default=1)
    step = models.PositiveIntegerField()
    timestamp = models.DateTimeField()
    loss = models.FloatField(null=True)
    lr = models.FloatField(null=True)
    tokens_per_s = models.FloatField(null=True)
    step_time_s = models.FloatField(null=True)
    insert_id = models.CharField(max_length=128)

    class Meta:
        ordering = ["step", "timestamp"]
        indexes = [models.Index(fields=["job", "step"])]
        constraints = [
            models.UniqueConstraint(fields=["job", "insert_id"], name="step_once_per_log_entry"),
        ]


class LogLine(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="log_lines")
    attempt = models.PositiveIntegerField(default=1)
    timestamp = models.DateTimeField()
    severity = models.PositiveSmallIntegerField(default=200)  # Cloud Logging's numeric levels
    replica = models.CharField(max_length=40, blank=True)
    message = models.TextField()
    insert_id = models.CharField(max_length=128)

    class Meta:
        ordering = ["timestamp", "insert_id"]
        indexes = [models.Index(fields=["job", "timestamp"])]
        constraints = [
            models.UniqueConstraint(fields=["job", "insert_id"], name="log_once_per_entry"),
        ]


class LogCursor(models.Model):
    """How far the log follower has read, per Google Cloud project."""

    project = models.CharField(max_length=100, unique=True)
    timestamp = models.DateTimeField()
    insert_id = models.CharField(max_length=128, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class Lease(models.Model):
    """A named, expiring lock for singleton tasks (see controlplane.leases)."""

    name = models.CharField(max_length=200, primary_key=True)
    holder = models.CharField(max_length=100, blank=True)
    expires_at = models.DateTimeField()


def event_payload(event: JobEvent) -> dict[str, Any]:
    return {"kind": event.kind, "step": event.step, "timestamp": event.timestamp.isoformat(),
            "replica": event.replica, **event.data}
