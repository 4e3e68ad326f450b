"""TrainingPipelines in SQLite, beside the CustomJobs and stored the same way (jobs/store.py),
so a pipeline survives an emulator restart: the serialized aiplatform.v1 TrainingPipeline. Its
state is a PipelineState, whose values share JobState's numbers (SUCCEEDED 4, FAILED 5,
CANCELLING 6, CANCELLED 7), so a Record's `terminal` holds for it too."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.core.store import Table
from localvertex.jobs.store import Record, RecordStore

TrainingPipelinePb = aiplatform_v1.TrainingPipeline.pb()
PipelineState = aiplatform_v1.PipelineState


@dataclass
class PipelineRecord(Record):
    job: TrainingPipelinePb  # type: ignore[valid-type]


def _row(record: PipelineRecord) -> tuple[object, ...]:
    return (record.id, record.project, record.location, record.job.state,
            record.job.SerializeToString())


def _record(row: tuple) -> PipelineRecord:
    pipeline_id, project, location, _, blob = row
    return PipelineRecord(id=pipeline_id, project=project, location=location,
                          job=TrainingPipelinePb.FromString(blob))


TRAINING_PIPELINES = Table(
    name="training_pipelines",
    schema="""
CREATE TABLE IF NOT EXISTS training_pipelines (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    location TEXT NOT NULL,
    state INTEGER NOT NULL,
    pipeline BLOB NOT NULL
);
""",
    columns=("id", "project", "location", "state", "pipeline"),
    encode=_row,
    decode=_record,
    order="CAST(id AS INTEGER) DESC",
)


class PipelineStore(RecordStore[PipelineRecord]):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, TRAINING_PIPELINES)
