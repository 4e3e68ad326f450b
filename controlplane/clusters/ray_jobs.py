"""A Ray job's own job (Job kind ray), and its output into the log store as that job's lines.

Ray's Job Submission API returns a job's whole output each time it is read, without
timestamps: the lines are stamped when first read. Each line is stored once, as a log entry of
the Ray job's job whose insert id is the line's number: the lines and how far they go
(RayJob.lines_stored) are stored in one transaction, so no line is read twice. An event line's
insert id is its event's text, as Ray may forward one worker line more than once: a repeat is
dropped before it is stored (the log table's key holds the time, controlplane/logs/models.py,
so it would not catch a repeat stamped later; vertexplan.clusters.ray_logs keeps each step
once too). The trainers' event lines (the same
contract as under torchrun, DESIGN.md) become step metrics, timeline events, checkpoints and
failures exactly as a CustomJob's do (controlplane/logs/store.py). The job is never submitted,
reconciled or billed as a job: the cluster runs and bills it; its state follows the Ray job's
(RayJob.transition).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from controlplane.backends import storage
from controlplane.clusters.models import Cluster, RayJob
from controlplane.logs.models import LogLine
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobAttempt, JobKind, JobState
from vertexplan.clusters import ray_logs
from vertexplan.logparse.entries import LogEntry

# The worker Ray forwarded a line from: `(RayTrainWorker pid=123, ip=10.0.0.2) `.
WORKER_PREFIX = re.compile(r"^\([^()]{1,200}\)\s*")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Lines stored per batch (one transaction each).
BATCH_LINES = 5000
PRIMARY_REPLICA = "workerpool0-0"


def create_job(cluster: Cluster, user: Any, entrypoint: list[str]) -> Job:
    """The Ray job's job, before the Ray job itself (same transaction). It writes under its
    own folder of the team's output prefix, as any job does."""
    job = Job.objects.create(
        team=cluster.team, created_by=user, name=f"{cluster.name}-ray"[:100], kind=JobKind.RAY,
        request={"cluster": cluster.name, "entrypoint": entrypoint}, custom_job={},
        project=settings.VERTEX_PROJECT, region=cluster.region)
    # No worker pools: Ray places the workers, so any replica name is the job's own; the
    # paths its events name must lie under its output folder (controlplane/logs/trust.py).
    job.custom_job = {"jobSpec": {"workerPoolSpecs": [],
                                  "baseOutputDirectory": {"outputUriPrefix": job.output_uri}}}
    job.save(update_fields=["custom_job"])
    job.events.create(kind="state", attempt=1,
                      data={"from": "", "to": JobState.QUEUED, "source": "created"})
    return job


def attach(ray_job: RayJob) -> None:
    """Name the job after the Ray job and record its attempt (the Ray submission), once the
    Ray job has its id."""
    job = ray_job.job
    assert job is not None
    job.name = f"{ray_job.cluster.name}-ray-{ray_job.pk}"[:100]
    job.save(update_fields=["name"])
    JobAttempt.objects.create(job=job, number=1, display_name=ray_job.submission_id,
                              region=job.region)


def output_env(job: Job) -> dict[str, str]:
    """Where the trainer writes, as Vertex tells a CustomJob's replicas (AIP_*): under the
    job's folder, which every Ray worker reaches (gs://, or the emulator's local stand-in)."""
    base = job.output_uri.rstrip("/")
    return {"AIP_CHECKPOINT_DIR": storage.path_for_writer(f"{base}/checkpoints/"),
            "AIP_MODEL_DIR": storage.path_for_writer(f"{base}/model/"),
            "AIP_TENSORBOARD_LOG_DIR": storage.path_for_writer(f"{base}/logs/")}


def _entry(key: str, line: ray_logs.LogLine, at: datetime) -> LogEntry:
    body = WORKER_PREFIX.sub("", _ANSI.sub("", line.text), count=1)
    payload = event_in(body)
    if payload is None:
        # Zero-padded: lines read together are ordered by it.
        return LogEntry(insert_id=f"{key}-{line.number:09d}", timestamp=at,
                        severity=line.severity, job_id=key, task_name="",
                        text_payload=line.text)
    digest = hashlib.sha256(body.strip().encode()).hexdigest()[:32]
    rank = payload.get("rank")
    replica = f"workerpool0-{rank}" if isinstance(rank, int) and 0 <= rank < 10**6 \
        else PRIMARY_REPLICA
    return LogEntry(insert_id=f"{key}-e{digest}", timestamp=at, severity=line.severity,
                    job_id=key, task_name=replica, json_payload=payload)


def event_in(body: str) -> dict[str, Any] | None:
    """The event object a line carries (the trainer prints one JSON object a line)."""
    start = body.find("{")
    if start < 0:
        return None
    try:
        value = json.loads(body[start:])
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("event"), str) else None


def store_output(ray_job: RayJob, text: str, *, final: bool) -> int:
    """Store the lines of the output not stored yet; returns how many were offered. A last
    line without its newline waits for the next read, unless the job has ended."""
    if ray_job.job_id is None:
        return 0
    # Only the lines after those stored are read: Ray gives the whole output at every poll.
    new = ray_logs.lines(text, after=ray_job.lines_stored)
    if new and not final and not text.endswith(("\n", "\r")):
        new = new[:-1]
    key = f"ray-{ray_job.pk}"
    now = timezone.now()
    for first in range(0, len(new), BATCH_LINES):
        batch = new[first:first + BATCH_LINES]
        # Ray gives no times: the lines read now are stamped now, in their order.
        entries = [_entry(key, line, now + timedelta(microseconds=first + i))
                   for i, line in enumerate(batch)]
        with transaction.atomic():
            store_entries(_unrepeated(ray_job.job_id, entries),
                          {key: Target(ray_job.job_id, 1)})
            ray_job.lines_stored = batch[-1].number
            ray_job.save(update_fields=["lines_stored"])
    return len(new)


def _unrepeated(job_id: int, entries: list[LogEntry]) -> list[LogEntry]:
    """The entries without the events stored before or earlier in the batch."""
    events = {e.insert_id for e in entries if e.json_payload is not None}
    seen = set(LogLine.objects.filter(job_id=job_id, insert_id__in=events)
               .values_list("insert_id", flat=True)) if events else set()
    kept = []
    for entry in entries:
        if entry.json_payload is not None:
            if entry.insert_id in seen:
                continue
            seen.add(entry.insert_id)
        kept.append(entry)
    return kept


def origin(job: Job) -> dict[str, str] | None:
    """What a Ray job's job is part of, for its page and API record (runs.panels.origin)."""
    ray_job = RayJob.objects.filter(job=job).select_related("cluster").first()
    return None if ray_job is None else _origin_of(ray_job)


def origins(jobs: Sequence[Job]) -> dict[int, dict[str, str]]:
    """origin() of a page of Ray jobs' jobs, by job id, in one query (the job list's rows)."""
    ray_jobs = (RayJob.objects.filter(job__in=[job.pk for job in jobs])
                .select_related("cluster").only("job", "cluster", "cluster__name"))
    return {ray_job.job_id: _origin_of(ray_job) for ray_job in ray_jobs}


def _origin_of(ray_job: RayJob) -> dict[str, str]:
    return {"kind": "ray",
            "label": f"Ray job {ray_job.submission_id} on cluster {ray_job.cluster.name}",
            "url": reverse("clusters-detail", args=[ray_job.cluster_id]),
            "api": reverse("api-ray-job", args=[ray_job.pk])}
