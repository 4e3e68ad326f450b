"""CustomJobs in SQLite, so jobs survive an emulator restart.

A job is kept as its serialized aiplatform.v1 CustomJob plus what Vertex tracks but does not
expose (restart and preemption counts, each replica's pid), all behind one lock: job updates
are rare next to log writes, and every update is a read-modify-write of one row.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.cloudlogging.store import connect

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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    location TEXT NOT NULL,
    state INTEGER NOT NULL,
    job BLOB NOT NULL,
    extra TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_parent ON jobs (project, location, id);
"""


@dataclass
class JobRecord:
    id: str
    project: str
    location: str
    job: CustomJobPb  # type: ignore[valid-type]
    restart_count: int = 0
    preemption_count: int = 0
    # task name -> {"pid": int | None, "restarts": int, "port": int}
    replicas: dict[str, dict] = field(default_factory=dict)

    @property
    def state(self) -> int:
        return self.job.state

    @property
    def terminal(self) -> bool:
        return self.job.state in TERMINAL_STATES

    def extra_json(self) -> str:
        return json.dumps(
            {
                "restart_count": self.restart_count,
                "preemption_count": self.preemption_count,
                "replicas": self.replicas,
            }
        )


class JobStore:
    def __init__(self, db_path: Path) -> None:
        self._conn = connect(db_path)
        self._conn.executescript(_SCHEMA)
        self._conn.commit()
        self._lock = threading.RLock()
        row = self._conn.execute("SELECT max(CAST(id AS INTEGER)) FROM jobs").fetchone()
        self._last_id = int(row[0] or 0)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def next_id(self) -> str:
        """A new job id: digits, like Vertex's, from the clock in microseconds, never reused."""
        with self._lock:
            self._last_id = max(time.time_ns() // 1000, self._last_id + 1)
            return str(self._last_id)

    def insert(self, record: JobRecord) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO jobs (id, project, location, state, job, extra) VALUES (?,?,?,?,?,?)",
                (
                    record.id,
                    record.project,
                    record.location,
                    record.job.state,
                    record.job.SerializeToString(),
                    record.extra_json(),
                ),
            )
            self._conn.commit()

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, project, location, job, extra FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
        return _record(row) if row else None

    def update(self, job_id: str, change: Callable[[JobRecord], None]) -> JobRecord:
        """Apply `change` to the stored job atomically and save it; KeyError if it is gone."""
        with self._lock:
            record = self.get(job_id)
            if record is None:
                raise KeyError(job_id)
            change(record)
            self._conn.execute(
                "UPDATE jobs SET state = ?, job = ?, extra = ? WHERE id = ?",
                (record.job.state, record.job.SerializeToString(), record.extra_json(), job_id),
            )
            self._conn.commit()
            return record

    def list(self, project: str, location: str) -> list[JobRecord]:
        """Jobs under a parent, newest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, project, location, job, extra FROM jobs"
                " WHERE project = ? AND location = ?",
                (project, location),
            ).fetchall()
        records = [_record(r) for r in rows]
        records.sort(key=lambda r: int(r.id), reverse=True)
        return records

    def unfinished(self) -> list[JobRecord]:
        placeholders = ",".join("?" * len(TERMINAL_STATES))
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, project, location, job, extra FROM jobs"
                f" WHERE state NOT IN ({placeholders})",
                tuple(int(s) for s in TERMINAL_STATES),
            ).fetchall()
        return [_record(r) for r in rows]

    def delete(self, job_id: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            self._conn.commit()


def _record(row: sqlite3.Row | tuple) -> JobRecord:
    job_id, project, location, blob, extra = row
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
