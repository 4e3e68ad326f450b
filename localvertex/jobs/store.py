"""JobService's resources in SQLite (core/store.py), so jobs survive an emulator restart.

A resource is kept as its serialized aiplatform.v1 message with where it lives and its state
(what listing and resuming look up). A CustomJob also keeps what Vertex tracks but does not
expose: restart and preemption counts, and each replica's pid. HyperparameterTuningJobs lie the
same way in a table of their own (tuning/store.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.cloud import aiplatform_v1

from localvertex.core.store import Store, Table

CustomJobPb = aiplatform_v1.CustomJob.pb()
JobState = aiplatform_v1.JobState

TERMINAL_STATES = frozenset(
    {
        JobState.JOB_STATE_SUCCEEDED,
        JobState.JOB_STATE_FAILED,
        JobState.JOB_STATE_CANCELLED,
        JobState.JOB_STATE_EXPIRED,
        JobState.JOB_STATE_PARTIALLY_SUCCEEDED,
    }
)


@dataclass
class Record:
    """One of JobService's resources as stored: its message (`job`) and where it lives."""

    id: str
    project: str
    location: str
    job: Any  # the aiplatform.v1 message (protobuf)

    @property
    def state(self) -> int:
        return self.job.state

    @property
    def terminal(self) -> bool:
        return self.job.state in TERMINAL_STATES


R = TypeVar("R", bound=Record)


class RecordStore(Store[R]):
    """Records under a parent (projects/P/locations/L), newest first."""

    def list(self, project: str, location: str) -> list[R]:
        return self.select("project = ? AND location = ?", (project, location))

    def list_before(self, project: str, location: str, before: int | None, limit: int
                    ) -> list[R]:
        """Up to LIMIT records under a parent, newest first, whose ids are below BEFORE (from
        the newest when None): a List reads its page a chunk at a time, so a page of a long
        history costs the records up to its last match, not every record."""
        if before is None:
            return self.select("project = ? AND location = ?", (project, location), limit)
        return self.select("project = ? AND location = ? AND CAST(id AS INTEGER) < ?",
                           (project, location, before), limit)

    def unfinished(self) -> list[R]:
        placeholders = ",".join("?" * len(TERMINAL_STATES))
        return self.select(f"state NOT IN ({placeholders})",
                           tuple(int(s) for s in TERMINAL_STATES))


@dataclass
class JobRecord(Record):
    job: CustomJobPb  # type: ignore[valid-type]
    restart_count: int = 0
    preemption_count: int = 0
    # task name -> {"pid": int | None, "restarts": int, "port": int}
    replicas: dict[str, dict] = field(default_factory=dict)

    def extra_json(self) -> str:
        return json.dumps(
            {
                "restart_count": self.restart_count,
                "preemption_count": self.preemption_count,
                "replicas": self.replicas,
            }
        )


def _job_row(record: JobRecord) -> tuple[object, ...]:
    return (record.id, record.project, record.location, record.job.state,
            record.job.SerializeToString(), record.extra_json())


def _job_record(row: tuple) -> JobRecord:
    job_id, project, location, _, blob, extra = row
    data = json.loads(extra)
    return JobRecord(
        id=job_id,
        project=project,
        location=location,
        job=CustomJobPb.FromString(blob),
        restart_count=data.get("restart_count", 0),
        preemption_count=data.get("preemption_count", 0),
        replicas=data.get("replicas", {}),
    )


JOBS = Table(
    name="jobs",
    schema="""
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    location TEXT NOT NULL,
    state INTEGER NOT NULL,
    job BLOB NOT NULL,
    extra TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_parent ON jobs (project, location, id);
""",
    columns=("id", "project", "location", "state", "job", "extra"),
    encode=_job_row,
    decode=_job_record,
    order="CAST(id AS INTEGER) DESC",
)


class JobStore(RecordStore[JobRecord]):
    """The CustomJobs; its ids (new_id) name the tuning jobs and operations too."""

    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, JOBS)
