"""Jobs and what happened to them: attempts (one CustomJob each), timeline events, restarts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.core import signals
from controlplane.runs import config_keys
from controlplane.teams import policy as team_policy
from controlplane.teams.models import Team


class JobState(models.TextChoices):
    # Waiting in the control plane's own queue for its team's share of the project's
    # accelerators (controlplane/runs/admission.py; Job.queue says why and its place).
    QUEUED_LOCAL = "QUEUED_LOCAL", "queued here"
    QUEUED = "QUEUED"          # accepted; no CustomJob yet, or Vertex has it queued
    # Vertex refused to create the CustomJob for quota: retried with backoff (Job.quota_wait
    # says which quota, where, and the numbers) until the quota allows it or it is cancelled.
    WAITING_FOR_QUOTA = "WAITING_FOR_QUOTA", "waiting for quota"
    PENDING = "PENDING"        # Vertex is provisioning machines
    RUNNING = "RUNNING"
    CANCELLING = "CANCELLING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class JobKind(models.TextChoices):
    """Where a job comes from. Only JOB goes through the job path (submit, reconcile, recover,
    cancel, resubmit, the team's spend and budget). A sweep's trial and a Ray job on a cluster
    get a job of their own for what every job has (its log, loss curve, checkpoints, page);
    their sweep or cluster runs them, bills them and lists them."""

    JOB = "job"
    TRIAL = "trial"   # one trial of a sweep (controlplane/sweeps/trial_jobs.py)
    RAY = "ray"       # one Ray job on a cluster (controlplane/clusters/ray_jobs.py)


class HealthState(models.TextChoices):
    OK = "ok"
    SUSPECTED_HANG = "suspected_hang", "suspected hang"
    STRAGGLER = "straggler"


TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
ACTIVE_STATES = frozenset(set(JobState) - TERMINAL_STATES)

# Which moves are legal. A terminal state is final: late or reordered observations of an
# earlier state (a reconcile that read Vertex before the job ended) are ignored, never applied.
_ALLOWED: dict[str, frozenset[str]] = {
    JobState.QUEUED_LOCAL: frozenset(ACTIVE_STATES | TERMINAL_STATES) - {JobState.QUEUED_LOCAL},
    JobState.QUEUED: frozenset(ACTIVE_STATES | TERMINAL_STATES) - {JobState.QUEUED},
    JobState.WAITING_FOR_QUOTA: frozenset(ACTIVE_STATES | TERMINAL_STATES)
    - {JobState.WAITING_FOR_QUOTA, JobState.CANCELLING},
    # QUEUED_LOCAL from a holding state: stopped at a checkpoint for another team's
    # guarantee and requeued (controlplane/runs/admission.py).
    JobState.PENDING: frozenset({JobState.QUEUED, JobState.RUNNING, JobState.CANCELLING,
                                 JobState.QUEUED_LOCAL} | TERMINAL_STATES),
    JobState.RUNNING: frozenset({JobState.QUEUED, JobState.PENDING, JobState.CANCELLING,
                                 JobState.QUEUED_LOCAL} | TERMINAL_STATES),
    JobState.CANCELLING: frozenset(TERMINAL_STATES),
    JobState.SUCCEEDED: frozenset(),
    JobState.FAILED: frozenset(),
    JobState.CANCELLED: frozenset(),
}


# A job row's JSON documents: what it asked for and what it became, its settings and its
# records. Each is decoded for every row read; a reader of a page of jobs (a reconcile sweep's
# restarts, health and cost: 500 rows a page, every 5 s) leaves out those it does not read.
JOB_DOCUMENTS = ("request", "custom_job", "price_snapshot", "recovery_options", "quota_wait",
                 "tracking", "tags", "config", "queue", "health_detail")


def job_documents_except(*read: str) -> list[str]:
    """The job row's JSON documents, less those named (for QuerySet.defer)."""
    unknown = set(read) - set(JOB_DOCUMENTS)
    if unknown:
        raise ValueError(f"not a job document: {sorted(unknown)}")
    return [name for name in JOB_DOCUMENTS if name not in read]


class Job(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="jobs")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=JobKind.choices, default=JobKind.JOB,
                            db_index=True)
    # What the user asked for (the composer's input) and what it became (Vertex REST JSON,
    # without the per-attempt display name and labels).
    request = models.JSONField()
    custom_job = models.JSONField()
    project = models.CharField(max_length=100)
    region = models.CharField(max_length=40)

    state = models.CharField(max_length=20, choices=JobState.choices, default=JobState.QUEUED,
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

    # Recovery beyond Vertex's own retries (controlplane/runs/recovery.py): a named strategy, how
    # many new attempts it may submit, and its options (scheduling fallbacks, other regions).
    recovery_strategy = models.CharField(max_length=40, blank=True)
    max_recoveries = models.PositiveSmallIntegerField(default=0)
    recovery_options = models.JSONField(default=dict, blank=True)
    recoveries = models.PositiveIntegerField(default=0)
    # While WAITING_FOR_QUOTA: the refused quota (metric, region, limit, usage, requested, as
    # Vertex said them), the refusal's message, when the wait began, how many creates were
    # refused and when the next is tried. Kept after the wait as its record.
    quota_wait = models.JSONField(default=dict, blank=True)
    # When the reconciler last compared this job with the backend: sweeps start with the
    # longest-unseen jobs, so one slow sweep never starves the same jobs twice.
    reconciled_at = models.DateTimeField(null=True, blank=True)
    # How far controlplane/logs/restarts.py has read the job's signals: it skips a job whose events
    # have not changed, and copies only new SIGTERM/preemption log lines.
    restart_scan = models.CharField(max_length=64, blank=True)
    notices_scanned_to = models.DateTimeField(null=True, blank=True)
    # A resubmission starts from a checkpoint of an earlier job.
    resubmitted_from = models.ForeignKey("self", null=True, blank=True,
                                         on_delete=models.SET_NULL, related_name="resubmissions")
    resume_from = models.CharField(max_length=1024, blank=True)
    resume_from_step = models.PositiveIntegerField(null=True, blank=True)
    # Costs (controlplane/costs/spend.py): the price snapshot the job was estimated with, the
    # estimate its team's budget reserved (for its timeout), and the billed cost the reconciler
    # keeps up to date, all in integer micro-dollars.
    price_snapshot = models.JSONField(null=True, blank=True)
    estimate_micros = models.BigIntegerField(null=True, blank=True)
    estimate_hours = models.DecimalField(max_digits=9, decimal_places=3, null=True, blank=True)
    cost_micros = models.BigIntegerField(default=0)
    lost_micros = models.BigIntegerField(default=0)
    cost_updated_at = models.DateTimeField(null=True, blank=True)
    # Where the trainer says the run is tracked besides this product, from its `tracking`
    # events: provider (wandb, vertex_experiments, tensorboard) -> an http(s) URL.
    tracking = models.JSONField(default=dict, blank=True)
    # The team's own words on the job, changed from its page or the API at any time
    # (controlplane/runs/tags.py checks them): key -> value labels the list filters by, and a
    # free-text note.
    tags = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    # The request as flat keys (controlplane/runs/config_keys.py), written when the job is made:
    # the list filters by one of them with a single JSON key lookup, Compare lays them out.
    config = models.JSONField(default=dict, blank=True)
    # What hang and straggler detection last concluded (controlplane/logs/health.py): ok,
    # suspected_hang or straggler, and its figures (the silence and its limit, or the slow
    # ranks and by how much).
    health = models.CharField(max_length=16, choices=HealthState.choices, default="ok")
    health_detail = models.JSONField(default=dict, blank=True)
    # The queue in front of Vertex (controlplane/runs/admission.py): the job's priority (low,
    # normal, high; at most its team's cap), and while it is QUEUED_LOCAL why it waits and its
    # place, or the earlier run still stopping at a checkpoint before it may start again.
    priority = models.CharField(max_length=8, default="normal")
    queue = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "jobs_job"  # kept from the app it was first created in
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["team", "-created_at"]),
            # The job list (API and page) of one kind, newest first, as the keyset cursor
            # walks it: a page is read from the index and the count is an index-only scan.
            models.Index(fields=["team", "kind", "-created_at", "-id"], name="job_list_newest"),
        ]

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Every kind of job (a submission, a trial, a Ray job) gets its flat configuration
        # where it is made, from the request it is made with.
        if self._state.adding and not self.config and self.request:
            self.config = config_keys.flatten(self.request)
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def on_job_path(self) -> bool:
        """Submitted, reconciled, recovered, cancelled and billed as a job (not a sweep's trial
        or a Ray job, which their sweep or cluster runs)."""
        return self.kind == JobKind.JOB

    @property
    def display_name(self) -> str:
        return display_name_for(self.pk, self.attempt)

    @property
    def output_uri(self) -> str:
        # Shared by every attempt, so a new attempt resumes from the previous one's checkpoints;
        # under the team's output prefix (its policy; by default <CP_OUTPUT_URI>/<team>).
        return self.output_uri_under(team_policy.effective(self.team).output_prefix)

    def output_uri_under(self, prefix: str) -> str:
        """output_uri for a team's output prefix already read (many jobs of one team)."""
        return output_uri_for(self.pk, prefix)

    def current_attempt(self) -> JobAttempt | None:
        prefetched = getattr(self, "_prefetched_objects_cache", {}).get("attempts")
        if prefetched is not None:  # a page that read them with the job asks no more
            return next((a for a in prefetched if a.number == self.attempt), None)
        return self.attempts.filter(number=self.attempt).first()

    def record_tracking(self, links: dict[str, str]) -> None:
        """Add the run's tracking links (checked http(s) URLs), the newest for a provider
        replacing an older one. The caller holds the row lock."""
        merged = {**(self.tracking or {}), **links}
        if merged != self.tracking:
            self.tracking = merged
            self.save(update_fields=["tracking"])

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
        # Follow-ups of a state change (Slack, once it commits) belong to the apps that listen.
        signals.job_state_changed.send(sender=Job, job=self, event=event)
        return True


def output_uri_for(job_id: int, prefix: str) -> str:
    """A job's output URI under its team's output prefix (Job.output_uri)."""
    return f"{prefix}/job-{job_id}"


def display_name_for(job_id: int, attempt: int) -> str:
    """Deterministic, so a retried submission finds the CustomJob an earlier try created."""
    return contract_labels.job_display_name(job_id, attempt)


class JobTally(models.Model):
    """How many jobs have one (team, kind, state, submitter): the sum of `n` over the rows
    with those values. PostgreSQL's triggers on jobs_job add a row of +1 for each job that
    takes on the values and -1 for each that leaves them, whatever wrote it (the ORM, a bulk
    update, raw SQL), in the writer's own transaction; controlplane/runs/counts.py reads the
    sums and folds the rows together now and then. Rows are only ever added, never updated,
    so concurrent writers never wait on one another here.

    Plain ids, not foreign keys: a tally row must never stand in the way of deleting a team or
    a user who has no jobs left, nor cost a key check on every job write."""

    team_id = models.BigIntegerField()
    kind = models.CharField(max_length=8)
    state = models.CharField(max_length=20)
    created_by_id = models.BigIntegerField()
    n = models.BigIntegerField()

    class Meta:
        db_table = "jobs_jobtally"
        indexes = [models.Index(fields=["team_id", "kind", "state"], name="tally_by_team")]


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
        db_table = "jobs_jobattempt"  # kept from the app it was first created in
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
        db_table = "jobs_jobevent"  # kept from the app it was first created in
        ordering = ["timestamp", "id"]
        indexes = [models.Index(fields=["job", "timestamp"])]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "insert_id"], condition=~models.Q(insert_id=""),
                name="event_once_per_log_entry",
            ),
        ]


class RestartCause(models.TextChoices):
    PREEMPTION = "preemption", "spot preemption"
    STOCKOUT = "stockout", "stockout"
    CRASH = "crash", "replica exited with an error"
    BACKEND = "backend", "the backend restarted"
    HANG = "hang", "suspected hang"  # the control plane restarted it (logs/health.py)
    UNKNOWN = "restart", "restart"


class JobRestart(models.Model):
    """One run of one replica that ended and (usually) started over.

    `ordinal` is the number of the run that ended (1 = the replica's first run in the attempt),
    so a row is found again, not duplicated, each time detection runs.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="restart_records")
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
    checkpoint = models.ForeignKey(JobEvent, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    steps_lost = models.PositiveIntegerField(null=True, blank=True)
    sources = models.JSONField(default=list)

    class Meta:
        db_table = "jobs_jobrestart"  # kept from the app it was first created in
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
