"""What a job may say about itself, and nothing more.

A job's log entries are where its steps, checkpoints and failures come from, so they are
accepted only as Vertex writes them for that job and attempt:

* routed by the attempt's own CustomJob id (``resource.labels.job_id``), as before;
* a line that carries an event comes from one of the job's replicas: ``task_name`` is
  ``workerpool<N>-<i>`` for a pool the job has and an index below its replica count, and the
  entry's log name is ``projects/<project>/logs/<task_name>``, the log Vertex writes a
  replica's output to. Anything else (an entry another job wrote through the Logging API with
  this job's id, say) is kept out of the job's lines and events.
* every path an event names (a checkpoint saved, deleted or resumed from, the checkpoint a
  preemption left) lies under the job's own output prefix (its ``baseOutputDirectory``); an
  event that names any other path is recorded as ``suspicious_event`` and otherwise ignored,
  so no checkpoint list, resubmission or model registration can ever point at another
  team's files. One other path is a job's own to name: the checkpoint the control plane
  itself started it from (a resubmission's ``resume_from``), in its ``resumed`` event (a
  team's own framework names the folder it loads, which lies under the earlier job's prefix).

In production the log writer is the other half: give each team's jobs their own service
account (the team policy lists them, and no account serves two teams) without
``logging.logEntries.create``; Vertex's service agent writes the replicas' output, so a job
cannot write entries at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events
from controlplane.core.gcs_paths import bucket_key
from vertexplan.logparse.entries import LogEntry

SUSPICIOUS = "suspicious_event"
# The events that name paths, and the fields that hold them (contract/events.py).
PATH_FIELDS: Mapping[str, tuple[str, ...]] = contract_events.PATH_FIELDS
_TASK = re.compile(r"workerpool([0-3])-(\d{1,6})")


@dataclass(frozen=True)
class JobFacts:
    """What the control plane itself knows about a job: where it may write, which replicas it
    has. Built once per attempt followed."""

    output_prefix: str                # gs://bucket/key (no trailing slash); "" if unknown
    replica_counts: tuple[int, ...]   # per worker pool index, 0 for an empty pool
    project: str = ""
    resume_from: str = ""             # the checkpoint the control plane started the job from


def facts_for(custom_job: Mapping[str, Any] | None, project: str = "",
              fallback_prefix: str = "", resume_from: str = "") -> JobFacts:
    spec = (custom_job or {}).get("jobSpec") or {}
    prefix = ((spec.get("baseOutputDirectory") or {}).get("outputUriPrefix") or
              fallback_prefix or "")
    counts = []
    for pool in spec.get("workerPoolSpecs") or []:
        try:
            counts.append(int((pool or {}).get("replicaCount") or 0) if pool else 0)
        except (TypeError, ValueError):
            counts.append(0)
    return JobFacts(output_prefix=str(prefix).rstrip("/"), replica_counts=tuple(counts),
                    project=project, resume_from=resume_from or "")


def is_replica_of(entry: LogEntry, facts: JobFacts) -> bool:
    """True when the entry is a line Vertex wrote for one of this job's replicas."""
    match = _TASK.fullmatch(entry.task_name or "")
    if not match:
        return False
    pool, index = int(match.group(1)), int(match.group(2))
    if facts.replica_counts and (pool >= len(facts.replica_counts)
                                 or index >= max(facts.replica_counts[pool], 1)):
        return False
    log_name = getattr(entry, "log_name", "")
    if log_name:
        project, _, log_id = log_name.removeprefix("projects/").partition("/logs/")
        if log_id != entry.task_name or (facts.project and project != facts.project):
            return False
    return True


def entry_problem(entry: LogEntry, facts: JobFacts, carries_event: bool) -> str | None:
    """Why an entry routed to a job is not accepted as that job's, or None.

    Lines without an event that come from no replica (Vertex's own messages about the job:
    "Job completed successfully.") are accepted; anything that claims to be the trainer talking
    must come from the trainer's own log."""
    if is_replica_of(entry, facts):
        return None
    if not entry.task_name and not carries_event:
        return None
    return (f"not a log Vertex writes for this job's replicas (log "
            f"{getattr(entry, 'log_name', '') or '?'}, task {entry.task_name or '-'})")


class ReplicaCheck:
    """entry_problem for the entries of one page. Whether an entry is a replica's own output
    depends only on its task name, its log name and the job's facts, so is_replica_of runs
    once per (job, task, log) the page holds (a few replicas of a few jobs) and is looked up
    for the rest; an entry that is not a replica's goes through entry_problem itself. Each
    entry gets the verdict entry_problem gives it."""

    def __init__(self, facts: Mapping[int, JobFacts]) -> None:
        self._facts = facts
        self._replica: dict[tuple[int, str, str], bool] = {}

    def problem(self, job_id: int, entry: LogEntry, carries_event: bool) -> str | None:
        key = (job_id, entry.task_name, getattr(entry, "log_name", ""))
        replica = self._replica.get(key)
        if replica is None:
            replica = self._replica[key] = is_replica_of(entry, self._facts[job_id])
        return None if replica else entry_problem(entry, self._facts[job_id], carries_event)


def under_prefix(path: Any, prefix: str) -> bool:
    """True when `path` lies under the output prefix (segment by segment: gs://b/team-a is not
    under gs://b/team; paths read by controlplane/core/gcs_paths.py)."""
    inside, base = bucket_key(path), bucket_key(prefix)
    if inside is None or not base:
        return False
    return inside[:len(base)] == base


def _same_path(path: Any, chosen: str) -> bool:
    """Whether `path` is the checkpoint `chosen` (read as gcs_paths reads both; a trailing
    slash aside)."""
    if not chosen:
        return False
    named = bucket_key(path)
    return named is not None and named == bucket_key(chosen)


def event_problem(kind: str | None, fields: Mapping[str, Any], facts: JobFacts) -> str | None:
    """Why an event's paths are not the job's own, or None."""
    for name in PATH_FIELDS.get(kind or "", ()):
        value = fields.get(name)
        if value in (None, ""):
            continue
        if kind == contract_events.RESUMED and _same_path(value, facts.resume_from):
            continue
        if not facts.output_prefix:
            return f"{name} names a path, and the job has no output prefix to check it against"
        if not under_prefix(value, facts.output_prefix):
            return (f"{name} {str(value)[:300]!r} is outside the job's output prefix "
                    f"{facts.output_prefix}/")
    return None


def suspicious(kind: str | None, fields: Mapping[str, Any], reason: str) -> dict[str, Any]:
    """The data of the suspicious_event that stands in for a refused one (no path kept
    in a field that any reader of checkpoint events would pick up)."""
    return {"event": str(kind or "")[:40], "reason": reason[:500],
            "claimed": {k: str(v)[:300] for k, v in fields.items()
                        if k in ("step", *PATH_FIELDS.get(kind or "", ()))}}
