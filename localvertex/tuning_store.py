"""HyperparameterTuningJobs in SQLite, beside the CustomJobs (jobstore.py), so a tuning job
and its trials survive an emulator restart. The job is kept as its serialized aiplatform.v1
HyperparameterTuningJob, trials included; every update is one read-modify-write under a lock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.cloudlogging.store import connect
from localvertex.jobstore import TERMINAL_STATES

TuningJobPb = aiplatform_v1.HyperparameterTuningJob.pb()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tuning_jobs (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    location TEXT NOT NULL,
    state INTEGER NOT NULL,
    job BLOB NOT NULL
);
"""


@dataclass
class TuningRecord:
    id: str
    project: str
    location: str
    job: TuningJobPb  # type: ignore[valid-type]

    @property
    def terminal(self) -> bool:
        return self.job.state in TERMINAL_STATES


class TuningStore:
    def __init__(self, db_path: Path) -> None:
        self._conn = connect(db_path)
        self._conn.executescript(_SCHEMA)
        self._conn.commit()
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def insert(self, record: TuningRecord) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO tuning_jobs (id, project, location, state, job) VALUES (?,?,?,?,?)",
                (record.id, record.project, record.location, record.job.state,
                 record.job.SerializeToString()))
            self._conn.commit()

    def get(self, job_id: str) -> TuningRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, project, location, job FROM tuning_jobs WHERE id = ?", (job_id,)
            ).fetchone()
        return _record(row) if row else None

    def update(self, job_id: str, change: Callable[[TuningRecord], None]) -> TuningRecord:
        """Apply ``change`` atomically and save; KeyError if the job is gone."""
        with self._lock:
            record = self.get(job_id)
            if record is None:
                raise KeyError(job_id)
            change(record)
            self._conn.execute("UPDATE tuning_jobs SET state = ?, job = ? WHERE id = ?",
                               (record.job.state, record.job.SerializeToString(), job_id))
            self._conn.commit()
            return record

    def list(self, project: str, location: str) -> list[TuningRecord]:
        """Jobs under a parent, newest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, project, location, job FROM tuning_jobs"
                " WHERE project = ? AND location = ?", (project, location)).fetchall()
        records = [_record(r) for r in rows]
        records.sort(key=lambda r: int(r.id), reverse=True)
        return records

    def unfinished(self) -> list[TuningRecord]:
        placeholders = ",".join("?" * len(TERMINAL_STATES))
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, project, location, job FROM tuning_jobs"
                f" WHERE state NOT IN ({placeholders})",
                tuple(int(s) for s in TERMINAL_STATES)).fetchall()
        return [_record(r) for r in rows]

    def delete(self, job_id: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM tuning_jobs WHERE id = ?", (job_id,))
            self._conn.commit()


def _record(row: tuple) -> TuningRecord:
    job_id, project, location, blob = row
    return TuningRecord(id=job_id, project=project, location=location,
                        job=TuningJobPb.FromString(blob))
