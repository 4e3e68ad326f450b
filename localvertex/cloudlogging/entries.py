"""Turning what replicas print into Cloud Logging LogEntry messages, as Vertex's agent does.

A line that is one JSON object becomes `jsonPayload` with its `severity` lifted onto the entry;
any other line becomes `textPayload`. stdout is INFO and stderr ERROR unless the JSON says
otherwise. Entries are kept both as serialized protobuf (what the API answers) and as the few
columns the filters need (see store.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from google.cloud.logging_v2.types import LogEntry
from google.protobuf import json_format

from localvertex.core.timeutil import from_timestamp, to_timestamp

LogEntryPb = LogEntry.pb()

SEVERITIES: dict[str, int] = {
    "DEFAULT": 0,
    "DEBUG": 100,
    "INFO": 200,
    "NOTICE": 300,
    "WARNING": 400,
    "ERROR": 500,
    "CRITICAL": 600,
    "ALERT": 700,
    "EMERGENCY": 800,
}
# Spellings common in Python and other loggers that Cloud Logging's agents also accept.
_ALIASES = {"WARN": 400, "FATAL": 600, "TRACE": 100, "ERR": 500, "CRIT": 600, "EMERG": 800}

# The monitored resource of a training job's log, which only the emulator itself writes.
JOB_RESOURCE = "ml_job"
INFO = SEVERITIES["INFO"]
WARNING = SEVERITIES["WARNING"]
ERROR = SEVERITIES["ERROR"]

# Cloud Logging refuses entries over 256 KiB; a longer line is cut rather than lost.
MAX_LINE_BYTES = 256 * 1024


def severity_number(value: object) -> int | None:
    """The LogSeverity number for a name ("error", "WARN") or number, or None if unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        number = int(value)
        # Round down to a defined level, as Cloud Logging does for in-between numbers.
        return max((v for v in SEVERITIES.values() if v <= number), default=0)
    if isinstance(value, str):
        name = value.strip().upper()
        if name in SEVERITIES:
            return SEVERITIES[name]
        if name in _ALIASES:
            return _ALIASES[name]
        if name.isdigit():
            return severity_number(int(name))
    return None


@dataclass(frozen=True)
class StoredEntry:
    """One log entry as store.py keeps it: the protobuf and the columns filters look at."""

    project: str
    log_name: str
    resource_type: str
    job_id: str | None
    task_name: str | None
    resource_labels: str  # JSON object
    labels: str  # JSON object
    severity: int
    timestamp_ns: int
    insert_id: str
    text_payload: str | None
    json_payload: str | None  # JSON object
    blob: bytes  # serialized google.logging.v2.LogEntry


def project_of_log_name(log_name: str) -> str | None:
    parts = log_name.split("/")
    if len(parts) >= 4 and parts[0] == "projects" and parts[1] and parts[2] == "logs":
        return parts[1]
    return None


def from_line(
    *,
    project: str,
    job_id: str,
    task_name: str | None,
    line: str,
    default_severity: int,
    timestamp_ns: int,
    insert_id: str,
    log_id: str | None = None,
) -> StoredEntry:
    """The entry for one line a replica printed (or the emulator wrote on a replica's behalf)."""
    if len(line) > MAX_LINE_BYTES:
        line = line[:MAX_LINE_BYTES]
    entry = LogEntryPb()
    entry.log_name = f"projects/{project}/logs/{log_id or task_name}"
    entry.resource.type = JOB_RESOURCE
    entry.resource.labels["job_id"] = job_id
    entry.resource.labels["project_id"] = project
    if task_name:
        entry.resource.labels["task_name"] = task_name
    entry.timestamp.CopyFrom(to_timestamp(timestamp_ns))
    entry.receive_timestamp.CopyFrom(entry.timestamp)
    entry.insert_id = insert_id

    severity = default_severity
    payload = _json_object(line)
    json_text = None
    if payload is not None:
        lifted = severity_number(payload.get("severity"))
        if lifted is not None:
            severity = lifted
            del payload["severity"]
        try:
            json_format.ParseDict(payload, entry.json_payload)
            json_text = json.dumps(payload, allow_nan=True)
        except (json_format.ParseError, TypeError, ValueError):
            entry.ClearField("json_payload")
            payload = None
    if payload is None:
        severity = default_severity
        entry.text_payload = line
    entry.severity = severity
    return StoredEntry(
        project=project,
        log_name=entry.log_name,
        resource_type=JOB_RESOURCE,
        job_id=job_id,
        task_name=task_name,
        resource_labels=json.dumps(dict(entry.resource.labels)),
        labels="{}",
        severity=severity,
        timestamp_ns=timestamp_ns,
        insert_id=insert_id,
        text_payload=None if payload is not None else line,
        json_payload=json_text,
        blob=entry.SerializeToString(),
    )


def from_pb(entry: LogEntryPb) -> StoredEntry:  # type: ignore[valid-type]
    """The stored form of an entry a client wrote (timestamp and insert_id already filled)."""
    project = project_of_log_name(entry.log_name)
    if project is None:
        raise ValueError(f"log_name {entry.log_name!r} is not projects/PROJECT/logs/LOG_ID")
    payload_kind = entry.WhichOneof("payload")
    json_text = None
    if payload_kind == "json_payload":
        json_text = json.dumps(json_format.MessageToDict(entry.json_payload))
    labels = dict(entry.resource.labels)
    return StoredEntry(
        project=project,
        log_name=entry.log_name,
        resource_type=entry.resource.type,
        job_id=labels.get("job_id"),
        task_name=labels.get("task_name"),
        resource_labels=json.dumps(labels),
        labels=json.dumps(dict(entry.labels)),
        severity=int(entry.severity),
        timestamp_ns=from_timestamp(entry.timestamp),
        insert_id=entry.insert_id,
        text_payload=entry.text_payload if payload_kind == "text_payload" else None,
        json_payload=json_text,
        blob=entry.SerializeToString(),
    )


def _json_object(line: str) -> dict | None:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
