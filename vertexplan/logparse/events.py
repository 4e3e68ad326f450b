"""Log entries -> what they mean for a job. Pure: no database, no network.

Trainers print one JSON object per line (DESIGN.md, "Contract between trainers and the control
plane"); Cloud Logging turns it into jsonPayload. Every entry is kept as a log line; the known
events additionally become timeline events or step metrics, and lines that can report a
failure (warnings and errors: stderr, the platform's own messages, the trainer's `error`
event) are offered to vertexplan.logparse.failures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from vertexplan.logparse.entries import LogEntry

TIMELINE_EVENTS = frozenset({
    "run_started", "checkpoint_saved", "resumed", "preempted", "eval", "run_finished",
})
STEP_FIELDS = ("loss", "lr", "tokens_per_s", "step_time_s")
# Failures are looked for in lines at this severity or above (stderr is ERROR on Vertex),
# and in lines with no severity at all; INFO output is the trainer talking, not failing.
FAILURE_MIN_SEVERITY = 400
DEFAULT_SEVERITY = 0
# Lines the emulator (like Vertex's own agent) writes when it restarts a replica.
RESTART_PREFIX = "Restarting replica"


@dataclass(frozen=True)
class ParsedEntry:
    message: str                    # the text a person reads in the log view
    event: str | None = None        # a contract event name, when the line is one
    fields: dict[str, Any] = field(default_factory=dict)
    scan: bool = False              # whether the message may report a failure

    @property
    def step(self) -> int | None:
        value = self.fields.get("step")
        return value if isinstance(value, int) and value >= 0 else None

    @property
    def is_step(self) -> bool:
        return self.event == "step" and self.step is not None

    @property
    def is_timeline_event(self) -> bool:
        return self.event in TIMELINE_EVENTS


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _normalise(fields: dict[str, Any]) -> dict[str, Any]:
    # JSON numbers arrive through protobuf Struct as floats; steps and ranks are integers.
    out = dict(fields)
    for key in ("step", "total_steps", "rank", "world_size", "resumed_from_step", "bytes"):
        value = out.get(key)
        if isinstance(value, float) and value.is_integer():
            out[key] = int(value)
    return out


def _may_fail(severity: int) -> bool:
    return severity >= FAILURE_MIN_SEVERITY or severity == DEFAULT_SEVERITY


def parse(entry: LogEntry) -> ParsedEntry:
    if entry.json_payload is not None:
        payload = _normalise(entry.json_payload)
        event = payload.get("event")
        message = payload.get("message")
        if not isinstance(message, str) or not message:
            rest = {k: v for k, v in payload.items() if k not in ("severity", "message")}
            message = json.dumps(rest, sort_keys=True)
        if isinstance(event, str) and event:
            fields = {k: v for k, v in payload.items() if k not in ("severity", "message", "event")}
            # Of the contract's events only `error` carries a failure's words.
            return ParsedEntry(message=message, event=event, fields=fields,
                               scan=event == "error")
        return ParsedEntry(message=message, scan=_may_fail(entry.severity))
    text = (entry.text_payload or "").rstrip("\n")
    if text.startswith(RESTART_PREFIX):
        return ParsedEntry(message=text, event="replica_restarted", fields={"text": text})
    return ParsedEntry(message=text, scan=_may_fail(entry.severity))


def step_values(parsed: ParsedEntry) -> dict[str, float | None]:
    values = {name: _number(parsed.fields.get(name)) for name in STEP_FIELDS}
    if values["tokens_per_s"] is None:  # DESIGN.md: tokens_per_s or samples_per_s
        values["tokens_per_s"] = _number(parsed.fields.get("samples_per_s"))
    return values
