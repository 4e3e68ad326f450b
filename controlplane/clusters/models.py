"""Clusters (persistent resources, Ray on Vertex AI) and the Ray jobs submitted to them.

Vertex is the source of truth for what exists; a Cluster row says what was asked for and what
was last seen. The resource id on Vertex is derived from the primary key (`cp-cl-<pk>`) and a
Ray job's submission id from its own (`cp-ray-<pk>`), so a retried call finds what an earlier
try created. Each model's state changes in its one `transition` method.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team

logger = logging.getLogger(__name__)


def _move(row: models.Model, allowed: dict[str, frozenset[str]], new_state: str,
          changes: dict[str, Any]) -> bool:
    """One conditional UPDATE from the state the row was read in: of two workers making the
    same move exactly one wins. Returns whether this one did; only then is `row` changed."""
    old = row.state  # type: ignore[attr-defined]
    if new_state == old or new_state not in allowed[old]:
        return False
    changes = {"state": new_state, **changes}
    if type(row)._default_manager.filter(pk=row.pk, state=old).update(**changes) != 1:
        return False
    for name, value in changes.items():
        setattr(row, name, value)
    logger.info("%s %s: %s -> %s", type(row).__name__, row.pk, old, new_state)
    return True


class Cluster(models.Model):
    class State(models.TextChoices):
        CREATING = "CREATING"  # asked for; Vertex provisions it
        RUNNING = "RUNNING"  # billing
        UPDATING = "UPDATING"  # replica counts changing; still billing
        DELETING = "DELETING"  # still billing until Vertex says it is gone
        DELETED = "DELETED"
        FAILED = "FAILED"

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="clusters")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    name = models.CharField(max_length=63)  # the team's name for it (a valid resource id)
    region = models.CharField(max_length=40)
    request = models.JSONField()  # the cluster request as given (vertexplan.clusters)
    resource = models.JSONField()  # the PersistentResource it composed to (REST JSON)
    ray_version = models.CharField(max_length=20, blank=True)  # empty: no Ray runtime

    state = models.CharField(max_length=10, choices=State.choices, default=State.CREATING,
                             db_index=True)
    vertex_name = models.CharField(max_length=300, blank=True)
    operation_name = models.CharField(max_length=300, blank=True)
    dashboard_uri = models.CharField(max_length=300, blank=True)  # RAY_DASHBOARD_URI
    error_message = models.TextField(blank=True)

    # Price per hour at the current replica counts, in micro-dollars, and where it came from.
    hourly_micros = models.BigIntegerField(default=0)
    min_hourly_micros = models.BigIntegerField(default=0)
    max_hourly_micros = models.BigIntegerField(default=0)
    price_source = models.CharField(max_length=300, blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    running_since = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"], condition=~models.Q(state__in=["DELETED", "FAILED"]),
                name="one_live_cluster_per_name"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def vertex_resource_id(self) -> str:
        return contract_labels.cluster_resource_id(self.pk)

    @property
    def live(self) -> bool:
        return self.state not in (self.State.DELETED, self.State.FAILED)

    @property
    def billed_since(self) -> datetime:
        """A persistent resource bills from its creation, busy or not."""
        return self.created_at

    def accrued_micros(self, at: datetime | None = None) -> int:
        """What it has cost so far at its hourly price, until deletion (or now)."""
        end = self.deleted_at or at or timezone.now()
        seconds = max((end - self.billed_since).total_seconds(), 0.0)
        return int(self.hourly_micros * seconds / 3600)

    def transition(self, new_state: str, *, error: str = "", dashboard_uri: str = "",
                   vertex_name: str = "", at: datetime | None = None) -> bool:
        """The one place a cluster's state changes; returns whether it changed. RUNNING records
        the Ray dashboard address; DELETED and FAILED stop the cost clock."""
        at = at or timezone.now()
        changes: dict[str, Any] = {}
        if vertex_name:
            changes["vertex_name"] = vertex_name
        if new_state == self.State.RUNNING:
            changes["dashboard_uri"] = dashboard_uri
            changes["operation_name"] = ""
            if self.running_since is None:
                changes["running_since"] = at
        if new_state in (self.State.DELETED, self.State.FAILED):
            changes["deleted_at"] = at
            changes["dashboard_uri"] = ""
        if new_state in (self.State.UPDATING, self.State.DELETING):
            changes["operation_name"] = ""  # the new call's operation replaces the last one
        if error:
            changes["error_message"] = error
        return _move(self, _CLUSTER_MOVES, new_state, changes)


class IdleFlag(models.Model):
    """A running cluster found idle past CP_CLUSTER_IDLE_FLAG_S, recorded once per idle period
    (an idle period is named by when it began, controlplane.clusters.idle.idle_since): the
    beat that finds it again records nothing, and a cluster that ran something meanwhile
    starts a new period. Telling the team is the notifications app's (Notification.idle_flag,
    reverse relation `notifications`), through the signal core.signals.cluster_idle_flagged."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="idle_flags")
    idle_since = models.DateTimeField()
    flagged_at = models.DateTimeField(default=timezone.now)
    # The cluster's price per hour when it was flagged: what the idle time is costing.
    hourly_micros = models.BigIntegerField()

    class Meta:
        ordering = ["-flagged_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "idle_since"],
                                               name="one_flag_per_idle_period")]

    def __str__(self) -> str:
        return f"{self.cluster} idle since {self.idle_since:%Y-%m-%d %H:%M}"


_C = Cluster.State
_CLUSTER_MOVES: dict[str, frozenset[str]] = {
    _C.CREATING: frozenset({_C.RUNNING, _C.DELETING, _C.FAILED, _C.DELETED}),
    _C.RUNNING: frozenset({_C.UPDATING, _C.DELETING, _C.FAILED}),
    _C.UPDATING: frozenset({_C.RUNNING, _C.DELETING, _C.FAILED}),
    _C.DELETING: frozenset({_C.DELETED, _C.FAILED}),
    _C.DELETED: frozenset(),
    _C.FAILED: frozenset({_C.DELETING}),  # a failed resource may still exist: delete it
}


class RayJob(models.Model):
    """A job submitted to a cluster's Ray through Ray's Job Submission API."""

    class State(models.TextChoices):
        QUEUED = "QUEUED"  # not yet submitted
        PENDING = "PENDING"
        RUNNING = "RUNNING"
        SUCCEEDED = "SUCCEEDED"
        FAILED = "FAILED"
        STOPPED = "STOPPED"

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="ray_jobs")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="ray_jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    entrypoint = models.JSONField()  # argv; joined with shell quoting for Ray
    env_vars = models.JSONField(default=dict, blank=True)
    entrypoint_num_cpus = models.FloatField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED,
                             db_index=True)
    message = models.TextField(blank=True)
    logs = models.TextField(blank=True)  # the driver's output, as Ray last returned it
    # The trainers' events in that output (vertexplan.clusters.ray_logs): ranks, loss curve,
    # checkpoints, the end.
    summary = models.JSONField(default=dict, blank=True)
    # Its own job (kind ray): the lines it prints stored in the log store as that job's, so its
    # steps, checkpoints, failures and logs are on a job page (controlplane/clusters/ray_jobs.py).
    job = models.OneToOneField(Job, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="ray_job")
    # How many of its output's lines are in the log store (they are numbered from 1).
    lines_stored = models.PositiveIntegerField(default=0)
    stop_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def submission_id(self) -> str:
        return contract_labels.ray_submission_id(self.pk)

    @property
    def ended(self) -> bool:
        return self.state in ENDED_RAY_STATES

    def transition(self, new_state: str, *, message: str = "",
                   at: datetime | None = None) -> bool:
        """The one place a Ray job's state changes; returns whether it changed."""
        at = at or timezone.now()
        changes: dict[str, Any] = {}
        if message:
            changes["message"] = message[:2000]
        if new_state == self.State.RUNNING and self.started_at is None:
            changes["started_at"] = at
        if new_state in ENDED_RAY_STATES:
            changes["ended_at"] = at
        moved = _move(self, _RAY_MOVES, new_state, changes)
        if moved and self.job_id is not None:
            self._follow_job(at)
        return moved

    def _follow_job(self, at: datetime) -> None:
        """Its job's state, start and end (and its one attempt's) as the Ray job's now."""
        job = Job.objects.select_for_update().get(pk=self.job_id)
        target = RAY_TO_JOB_STATE[self.state]
        if self.started_at is not None and job.started_at is None and \
                target in (JobState.RUNNING, JobState.SUCCEEDED, JobState.FAILED):
            job.update_state(JobState.RUNNING, at=self.started_at, source="ray")
        error = self.message if self.state in (self.State.FAILED, self.State.STOPPED) else ""
        job.update_state(target, at=at, error=error, source="ray")
        job.attempts.filter(number=1).update(vertex_state=self.state,
                                             started_at=self.started_at, ended_at=self.ended_at)


_R = RayJob.State
ENDED_RAY_STATES = frozenset({_R.SUCCEEDED, _R.FAILED, _R.STOPPED})
RAY_TO_JOB_STATE: dict[str, str] = {
    _R.QUEUED: JobState.QUEUED, _R.PENDING: JobState.PENDING, _R.RUNNING: JobState.RUNNING,
    _R.SUCCEEDED: JobState.SUCCEEDED, _R.FAILED: JobState.FAILED,
    _R.STOPPED: JobState.CANCELLED,
}
_RAY_MOVES: dict[str, frozenset[str]] = {
    _R.QUEUED: frozenset({_R.PENDING, _R.RUNNING, *ENDED_RAY_STATES}),
    _R.PENDING: frozenset({_R.RUNNING, *ENDED_RAY_STATES}),
    _R.RUNNING: frozenset(ENDED_RAY_STATES),
    _R.SUCCEEDED: frozenset(),
    _R.FAILED: frozenset(),
    _R.STOPPED: frozenset(),
}
