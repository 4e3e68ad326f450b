"""A Cloud Logging entry as the control plane reads it, and Cloud Logging's severity numbers.

Plain data: the backends make these from Google's LogEntry protos, the parser reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Cloud Logging's LogSeverity numbers.
SEVERITY_NUMBERS: dict[str, int] = {
    "DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400,
    "ERROR": 500, "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800,
}


@dataclass(frozen=True)
class LogEntry:
    insert_id: str
    timestamp: datetime
    severity: int
    job_id: str
    task_name: str
    json_payload: dict[str, Any] | None = None
    text_payload: str | None = None
    # projects/<project>/logs/<log id>: which log the entry was written to ("" when unknown).
    log_name: str = ""
