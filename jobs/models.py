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

    @property
    def name(self) -> str:
        """The member's username: what the audit log shows for a membership."""
        return self.user.get_username()

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

    # Recovery beyond Vertex's own retries (jobs/recovery.py): a named strategy, how many new
    # attempts it may submit, and its options (scheduling fallbacks, other regions).
    recovery_strategy = models.CharField(max_length=40, blank=True)
    max_recoveries = models.PositiveSmallIntegerField(default=0)
    recovery_options = models.JSONField(default=dict, blank=True)
    recoveries = models.PositiveIntegerField(default=0)
    # When the reconciler last compared this job with the backend: sweeps start with the
    # longest-unseen jobs, so one slow sweep never starves the same jobs twice.
    reconciled_at = models.DateTimeField(null=True, blank=True)
    # How far jobs/restarts.py has read the job's signals: it skips a job whose events have
    # not changed, and copies only new SIGTERM/preemption log lines.
    restart_scan = models.CharField(max_length=64, blank=True)
    notices_scanned_to = models.DateTimeField(null=True, blank=True)
    # A resubmission starts from a checkpoint of an earlier job.
    resubmitted_from = models.ForeignKey("self", null=True, blank=True,
                                         on_delete=models.SET_NULL, related_name="resubmissions")
    resume_from = models.CharField(max_length=1024, blank=True)
    resume_from_step = models.PositiveIntegerField(null=True, blank=True)
    # Costs (jobs/spend.py): the price snapshot the job was estimated with, the estimate its
    # team's budget reserved (for its timeout), and the billed cost the reconciler keeps up to
    # date, all in integer micro-dollars.
    price_snapshot = models.JSONField(null=True, blank=True)
    estimate_micros = models.BigIntegerField(null=True, blank=True)
    estimate_hours = models.DecimalField(max_digits=9, decimal_places=3, null=True, blank=True)
    cost_micros = models.BigIntegerField(default=0)
    lost_micros = models.BigIntegerField(default=0)
    cost_updated_at = models.DateTimeField(null=True, blank=True)

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
        event = JobEvent.objects.create(
            job=self, attempt=self.attempt, kind="state", timestamp=at,
            data={"from": old, "to": new_state, "error": error, "source": source},
        )
        # Follow-ups of a state change: the team's Slack channels hear of it once it commits.
        from jobs.notifications import service

        service.on_state_change(self, event)
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
    error_code = models.IntegerField(default=0)

    # Why this attempt exists and where it runs (recovery may change both).
    reason = models.CharField(max_length=20, default="submit")  # submit | recovery
    scheduling = models.CharField(max_length=20, blank=True)    # SPOT, FLEX_START, STANDARD
    region = models.CharField(max_length=40, blank=True)
    # Backoff before a recovery attempt is submitted, and when a submit was last queued (the
    # reconciler re-queues a lost one, at most once per CP_RESUBMIT_AFTER_S).
    not_before = models.DateTimeField(null=True, blank=True)
    submit_queued_at = models.DateTimeField(null=True, blank=True)
    # The newest complete checkpoint when the attempt was created: what it resumes from.
    resume_checkpoint = models.CharField(max_length=1024, blank=True)
    resume_step = models.PositiveIntegerField(null=True, blank=True)
    # How it ended, classified by jobs/recovery.classify (preemption, stockout, config, ...).
    failure = models.CharField(max_length=20, blank=True)
    submitted_spec = models.JSONField(null=True, blank=True)
    # The prices of this attempt's region and scheduling when it was submitted: its bill.
    price_snapshot = models.JSONField(null=True, blank=True)

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
    """One row per training step reported by rank 0: the source of the charts.

    Long runs are downsampled by jobs.retention: a row then stands for `span` consecutive
    steps (the mean of their values, at the last one's step and timestamp).
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="steps")
    attempt = models.PositiveIntegerField(default=1)
    step = models.PositiveIntegerField()
    timestamp = models.DateTimeField()
    loss = models.FloatField(null=True)
    lr = models.FloatField(null=True)
    tokens_per_s = models.FloatField(null=True)
    step_time_s = models.FloatField(null=True)
    span = models.PositiveIntegerField(default=1)
    insert_id = models.CharField(max_length=128)

    class Meta:
        ordering = ["step", "timestamp"]
        indexes = [
            # The charts read a job's series in (attempt, step) order.
            models.Index(fields=["job", "attempt", "step"], name="step_series"),
            # The progress bar reads the newest step.
            models.Index(fields=["job", "timestamp"], name="step_newest"),
        ]
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
        indexes = [
            # The log tail and the API page newest-first through one job's lines.
            models.Index(fields=["job", "timestamp", "insert_id"], name="log_tail"),
            # Warnings and errors are rare among millions of lines: "ERROR and above" must not
            # scan the job's whole log. Partial, so INFO lines cost nothing to index here.
            models.Index(fields=["job", "timestamp"], name="log_warnings",
                         condition=models.Q(severity__gte=400)),
        ]
        constraints = [
            models.UniqueConstraint(fields=["job", "insert_id"], name="log_once_per_entry"),
        ]


class LogCursor(models.Model):
    """How far the log follower has read one attempt's entries (one CustomJob).

    Two positions, each a timestamp and the insertId of the entry read there:
    - head: where the next fresh read starts (the low-latency pass, every sweep);
    - settled: every entry with an earlier timestamp is stored, late arrivals included.
    The attempt is done when `settled` has passed its end: its last lines are in.
    """

    attempt = models.OneToOneField(JobAttempt, on_delete=models.CASCADE, primary_key=True,
                                   related_name="log_cursor")
    project = models.CharField(max_length=100)
    head_at = models.DateTimeField()
    head_insert_id = models.CharField(max_length=128, blank=True)
    settled_at = models.DateTimeField()
    settled_insert_id = models.CharField(max_length=128, blank=True)
    done = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["project", "done"], name="log_cursor_open")]

    def __str__(self) -> str:
        return f"logs of {self.attempt_id}: head {self.head_at}, settled {self.settled_at}"


class LogReadQuota(models.Model):
    """Cloud Logging read calls made for one project in the last minute (a sliding window),
    and the back-off after RESOURCE_EXHAUSTED: persisted, so successive sweeps, whichever
    worker runs them, share one budget."""

    project = models.CharField(max_length=100, unique=True)
    calls = models.JSONField(default=list)  # epoch seconds of the calls in the window
    paused_until = models.DateTimeField(null=True, blank=True)
    backoff_s = models.FloatField(default=0.0)


class LogFailure(models.Model):
    """A known failure recognised in a job's log (jobs.failures), shown with its explanation
    and suggested fix on the job page."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="failures")
    attempt = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=40)
    timestamp = models.DateTimeField()
    replica = models.CharField(max_length=40, blank=True)
    summary = models.TextField()        # the line (or exception) that gave it away
    last_frame = models.TextField(blank=True)  # a Python traceback's innermost frame
    insert_id = models.CharField(max_length=128)

    class Meta:
        ordering = ["timestamp", "id"]
        indexes = [models.Index(fields=["job", "timestamp"], name="failure_by_job")]
        constraints = [
            models.UniqueConstraint(fields=["job", "insert_id"], name="failure_once_per_entry"),
        ]


class LogRetention(models.Model):
    """How long a team's job logs are kept; unset fields fall back to the CP_LOG_* settings."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, primary_key=True,
                                related_name="log_retention")
    days = models.PositiveIntegerField(null=True, blank=True,
                                       help_text="Delete log lines older than this many days.")
    max_lines_per_job = models.PositiveIntegerField(
        null=True, blank=True, help_text="Keep at most this many log lines per job (the newest).")
    metric_points = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Downsample an attempt's step metrics beyond this many points.")

    def __str__(self) -> str:
        return f"log retention of {self.team}"


class Lease(models.Model):
    """A named, expiring lock for singleton tasks (see controlplane.leases)."""

    name = models.CharField(max_length=200, primary_key=True)
    holder = models.CharField(max_length=100, blank=True)
    expires_at = models.DateTimeField()


def event_payload(event: JobEvent) -> dict[str, Any]:
    return {"kind": event.kind, "step": event.step, "timestamp": event.timestamp.isoformat(),
            "replica": event.replica, **event.data}



# Model classes that live in their own modules, registered with the app from here.
from jobs.budgets.models import BudgetCrossing, TeamBudget  # noqa: E402, F401
from jobs.history import JobRestart  # noqa: E402, F401
from jobs.notifications.models import Notification, SlackChannel  # noqa: E402, F401
from jobs.serving.models import *  # noqa: E402, F403 - serving models live in their package
from jobs.templates_models import ComposerSettings, JobTemplate  # noqa: E402, F401
