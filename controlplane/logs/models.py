"""What the logs told us: lines, step metrics, recognised failures, and how far the follower has
read; with each team's retention."""

from __future__ import annotations

from django.db import models

from controlplane.runs.models import Job, JobAttempt
from controlplane.teams.models import Team


class StepMetric(models.Model):
    """One row per training step reported by rank 0: the source of the charts.

    Long runs are downsampled by controlplane/logs/retention.py: a row then stands for `span`
    consecutive steps (the mean of their values, at the last one's step and timestamp).
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
    # The step event's other numbers by name (grad_norm, epoch, a team's own metric): the job
    # page's custom panels (vertexplan.logparse.events.extra_values bounds them).
    extra = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "jobs_stepmetric"  # kept from the app it was first created in
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
    """One line of a job's log. On PostgreSQL the table is partitioned by week of `timestamp`
    (controlplane/logs/partitions.py): retention drops a week whole instead of deleting its
    rows. A partitioned table can only enforce keys that hold its partition key, so an entry's
    exactly-once key is (job, timestamp, insertId): Cloud Logging fixes both for an entry, and
    the control plane's own entries (Ray job lines, controlplane/clusters/ray_jobs.py) are
    stored once by their reader, so the key is as strict as (job, insertId)."""

    # No index of its own: the key below starts with the job and serves every job lookup.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="log_lines",
                            db_index=False)
    attempt = models.PositiveIntegerField(default=1)
    timestamp = models.DateTimeField()
    severity = models.PositiveSmallIntegerField(default=200)  # Cloud Logging's numeric levels
    replica = models.CharField(max_length=40, blank=True)
    message = models.TextField()
    insert_id = models.CharField(max_length=128)

    class Meta:
        db_table = "jobs_logline"  # kept from the app it was first created in
        ordering = ["timestamp", "insert_id"]
        indexes = [
            # Warnings and errors are rare among millions of lines: "ERROR and above" must not
            # scan the job's whole log. Partial, so INFO lines cost nothing to index here.
            models.Index(fields=["job", "timestamp"], name="log_warnings",
                         condition=models.Q(severity__gte=400)),
        ]
        constraints = [
            # Also the log tail's index: the API and the page read one job's lines in
            # (timestamp, insertId) order, newest first.
            models.UniqueConstraint(fields=["job", "timestamp", "insert_id"],
                                    name="log_once_per_entry"),
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
        db_table = "jobs_logcursor"  # kept from the app it was first created in
        indexes = [models.Index(fields=["project", "done"], name="log_cursor_open")]

    def __str__(self) -> str:
        return f"logs of {self.attempt_id}: head {self.head_at}, settled {self.settled_at}"


class FrameworkTrack(models.Model):
    """Where the recognizers of a team's own framework (vertexplan/logparse/frameworks) are in
    one replica's lines of one attempt: the framework the job runs (detected from its command
    or first lines) and the recognizers' counts, so the next page goes on from here whatever
    worker stores it. Written in the transaction that stores the lines it has read."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="framework_tracks")
    attempt = models.PositiveIntegerField(default=1)
    replica = models.CharField(max_length=40)
    # A key of vertexplan.logparse.frameworks.registry.FRAMEWORKS; "" while none is known.
    framework = models.CharField(max_length=20, blank=True)
    # vertexplan.logparse.frameworks.saved.to_json's form.
    state = models.JSONField(default=dict)
    # Lines read while no framework was known (detection from the first lines stops after
    # registry.DETECT_LINES of them).
    lines_read = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "attempt", "replica"],
                                               name="framework_track_once")]

    def __str__(self) -> str:
        return f"{self.framework or 'undetected'} lines of job {self.job_id}/{self.replica}"


class LogReadQuota(models.Model):
    """Cloud Logging read calls made for one project in the last minute (a sliding window),
    and the back-off after RESOURCE_EXHAUSTED: persisted, so successive sweeps, whichever
    worker runs them, share one budget."""

    project = models.CharField(max_length=100, unique=True)
    calls = models.JSONField(default=list)  # epoch seconds of the calls in the window
    paused_until = models.DateTimeField(null=True, blank=True)
    backoff_s = models.FloatField(default=0.0)

    class Meta:
        db_table = "jobs_logreadquota"  # kept from the app it was first created in


class LogFailure(models.Model):
    """A known failure recognised in a job's log (vertexplan.logparse.failures), shown with its
    explanation and suggested fix on the job page."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="failures")
    attempt = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=40)
    timestamp = models.DateTimeField()
    replica = models.CharField(max_length=40, blank=True)
    summary = models.TextField()        # the line (or exception) that gave it away
    last_frame = models.TextField(blank=True)  # a Python traceback's innermost frame
    insert_id = models.CharField(max_length=128)

    class Meta:
        db_table = "jobs_logfailure"  # kept from the app it was first created in
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

    class Meta:
        db_table = "jobs_logretention"  # kept from the app it was first created in

    def __str__(self) -> str:
        return f"log retention of {self.team}"
