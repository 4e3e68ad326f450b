"""Writing Cloud Logging entries to the emulator fast, with chosen timestamps and insertIds."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.cloud.logging_v2.types import LogEntry, WriteLogEntriesRequest
from google.protobuf import json_format

from tests.localvertex.helpers import PROJECT

LogEntryPb = LogEntry.pb()
WriteRequestPb = WriteLogEntriesRequest.pb()
SEVERITY = {"DEFAULT": 0, "INFO": 200, "WARNING": 400, "ERROR": 500}


@dataclass(frozen=True)
class Line:
    job_id: str
    insert_id: str
    timestamp: datetime
    text: str | None = None
    json: dict[str, Any] | None = None
    task: str = "workerpool0-0"
    severity: str = "INFO"


def to_pb(line: Line) -> Any:
    entry = LogEntryPb()
    entry.log_name = f"projects/{PROJECT}/logs/{line.task}"
    entry.resource.type = "ml_job"
    entry.resource.labels["job_id"] = line.job_id
    entry.resource.labels["task_name"] = line.task
    entry.timestamp.FromDatetime(line.timestamp.astimezone(UTC).replace(tzinfo=None))
    entry.insert_id = line.insert_id
    entry.severity = SEVERITY[line.severity]
    if line.json is not None:
        json_format.ParseDict(json.loads(json.dumps(line.json)), entry.json_payload)
    else:
        entry.text_payload = line.text or ""
    return entry


def write(logs: Any, lines: Iterable[Line], batch: int = 5000) -> int:
    """WriteLogEntries in big batches (raw protobuf messages: no per-entry wrapping)."""
    pending: list[Any] = []
    written = 0
    for line in lines:
        pending.append(to_pb(line))
        if len(pending) >= batch:
            logs.write_log_entries(request=WriteRequestPb(entries=pending))
            written += len(pending)
            pending = []
    if pending:
        logs.write_log_entries(request=WriteRequestPb(entries=pending))
        written += len(pending)
    return written
