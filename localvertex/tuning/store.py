"""HyperparameterTuningJobs in SQLite, beside the CustomJobs and stored the same way
(jobs/store.py), so a tuning job and its trials survive an emulator restart: the serialized
aiplatform.v1 HyperparameterTuningJob, trials included."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.core.store import Table
from localvertex.jobs.store import Record, RecordStore

TuningJobPb = aiplatform_v1.HyperparameterTuningJob.pb()


@dataclass
class TuningRecord(Record):
    job: TuningJobPb  # type: ignore[valid-type]


def _row(record: TuningRecord) -> tuple[object, ...]:
    return (record.id, record.project, record.location, record.job.state,
            record.job.SerializeToString())


def _record(row: tuple) -> TuningRecord:
    job_id, project, location, _, blob = row
    return TuningRecord(id=job_id, project=project, location=location,
                        job=TuningJobPb.FromString(blob))


TUNING_JOBS = Table(
    name="tuning_jobs",
    schema="""
CREATE TABLE IF NOT EXISTS tuning_jobs (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    location TEXT NOT NULL,
    state INTEGER NOT NULL,
    job BLOB NOT NULL
);
""",
    columns=("id", "project", "location", "state", "job"),
    encode=_row,
    decode=_record,
    order="CAST(id AS INTEGER) DESC",
)


class TuningStore(RecordStore[TuningRecord]):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, TUNING_JOBS)
