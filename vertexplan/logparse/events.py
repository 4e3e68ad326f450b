"""Log entries -> what they mean for a job. Pure: no database, no network.

Trainers print one JSON object per line (DESIGN.md, "Contract between trainers and the control
plane"); Cloud Logging turns it into jsonPayload. Every entry is kept as a log line; the known
events additionally become timeline events or step metrics, and every line that is not one of
the contract's own events (whatever its severity: a traceback printed on stdout arrives as
INFO) is offered to vertexplan.logparse.failures, as is the trainer's `error` event.

A caller that keeps a vertexplan.logparse.frameworks JobState per task passes it: a text
line that holds one of the recognizers' markers is then read by them (a Hugging Face Trainer,
torchtitan, Lightning or DeepSpeed job's own lines become the same events); without one, or
for a line no recognizer could read, the text line stays a plain line at no extra cost.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from contract import events as contract_events
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.frameworks import registry as frameworks_registry
from vertexplan.logparse.frameworks.registry import JobState

# The events, their fields and their names are the contract's (contract/events.py).
TIMELINE_EVENTS = contract_events.TIMELINE_EVENTS
STEP_FIELDS = contract_events.STEP_VALUES
# Warnings and worse: the lines the log view's "problems" filter shows. Failures are looked
# for at every severity: PyTorch, a launcher or a user's own code print a CUDA out-of-memory
# traceback on stdout as readily as on stderr, and Cloud Logging files stdout as INFO.
FAILURE_MIN_SEVERITY = 400
DEFAULT_SEVERITY = 0
# How long a `tracking` event's URL may be.
MAX_TRACKING_URL = 2000
# A step event's other numbers (grad_norm, epoch, tflops, a team's own metric) become the job
# page's custom panels: at most this many per step, each named as a metric is named.
MAX_EXTRA_VALUES = 16
MAX_EXTRA_NAME = 40
# Fields of a step event that are not a metric of the run (or are charted already).
_NOT_EXTRA = frozenset({"step", "total_steps", "rank_step_time_s", "samples_per_s",
                        "step_estimated", *contract_events.STEP_VALUES})
# Lines the emulator (like Vertex's own agent) writes when it restarts a replica.
RESTART_PREFIX = contract_events.RESTART_PREFIX


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
        return self.event == contract_events.STEP and self.step is not None

    @property
    def is_timeline_event(self) -> bool:
        return self.event in TIMELINE_EVENTS


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# JSON numbers arrive through protobuf Struct as floats; steps and ranks are integers.
_READ_AS_INTEGERS = frozenset(contract_events.READ_AS_INTEGERS)
# Of a JSON payload, what is not an event's field.
_NOT_FIELDS = frozenset({"severity", "message", "event"})


def _normalise(fields: dict[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    for key, value in fields.items():
        if isinstance(value, float) and key in _READ_AS_INTEGERS and value.is_integer():
            out[key] = int(value)
    return out


def plain_line(entry: LogEntry, frameworks: JobState | None = None) -> str | None:
    """The message of an entry that is a plain line (text that is no event: kept as a line
    and scanned for failures, nothing more), or None when parse() must read it. Most of a
    log is plain lines: this spares them building a ParsedEntry each. With `frameworks`
    (the task's recognizer state), a line holding a recognizer's marker goes to parse()."""
    if entry.json_payload is not None:
        return None
    text = (entry.text_payload or "").rstrip("\n")
    if text.startswith(RESTART_PREFIX):
        return None
    if frameworks is not None and frameworks_registry.may_be_framework_line(
            text, frameworks.framework):
        return None
    return text


def parse(entry: LogEntry, frameworks: JobState | None = None) -> ParsedEntry:
    if entry.json_payload is not None:
        payload = entry.json_payload  # its event and message are not numbers: read as sent
        event = payload.get("event")
        message = payload.get("message")
        if not isinstance(message, str) or not message:
            rest = {k: v for k, v in _normalise(payload).items()
                    if k not in ("severity", "message")}
            message = json.dumps(rest, sort_keys=True)
        if isinstance(event, str) and event:
            # _normalise's fields, made in the same pass (most events are steps: every page).
            fields = {k: int(v) if isinstance(v, float) and k in _READ_AS_INTEGERS
                      and v.is_integer() else v
                      for k, v in payload.items() if k not in _NOT_FIELDS}
            # Of the contract's events only `error` carries a failure's words.
            return ParsedEntry(message=message, event=event, fields=fields,
                               scan=event == contract_events.ERROR)
        return ParsedEntry(message=message, scan=True)
    text = (entry.text_payload or "").rstrip("\n")
    if text.startswith(RESTART_PREFIX):
        return ParsedEntry(message=text, event=contract_events.REPLICA_RESTARTED,
                           fields={"text": text})
    if frameworks is not None:
        found = frameworks_registry.recognize(text, frameworks)
        if found is not None:
            # A framework's progress line reports no failure: it is not scanned.
            return ParsedEntry(message=text, event=found.event, fields=dict(found.fields))
    return ParsedEntry(message=text, scan=True)


def step_values(parsed: ParsedEntry) -> dict[str, float | None]:
    values = {name: _number(parsed.fields.get(name)) for name in STEP_FIELDS}
    if values["tokens_per_s"] is None:  # DESIGN.md: tokens_per_s or samples_per_s
        values["tokens_per_s"] = _number(parsed.fields.get("samples_per_s"))
    return values


def extra_values(parsed: ParsedEntry) -> dict[str, float] | None:
    """A step event's other numbers, by name, for the custom panels; None when it has none.
    A name is a metric's name (a letter or _, then letters, digits, _ . / -, at most
    MAX_EXTRA_NAME); a value a finite number (not a boolean); the first MAX_EXTRA_VALUES."""
    extra: dict[str, float] = {}
    for name, value in parsed.fields.items():
        if name in _NOT_EXTRA or len(extra) >= MAX_EXTRA_VALUES:
            continue
        number = _number(value)
        if number is not None and _metric_name(name):
            extra[name] = number
    return extra or None


def _metric_name(name: str) -> bool:
    if not (0 < len(name) <= MAX_EXTRA_NAME) or not (name[0].isalpha() or name[0] == "_"):
        return False
    return name.isascii() and all(ch.isalnum() or ch in "_./-" for ch in name)


def tracking_link(fields: dict[str, Any]) -> tuple[str, str] | None:
    """(provider, run_url) of a `tracking` event when both are fit to become a link: a known
    provider and an absolute http(s) URL with a host, no credentials, no spaces or control
    characters. Anything else (a `javascript:` or `data:` URL, a relative path) is None."""
    provider, url = fields.get("provider"), fields.get("run_url")
    if not isinstance(provider, str) or provider not in contract_events.TRACKING_PROVIDERS \
            or not isinstance(url, str):
        return None
    if not url or len(url) > MAX_TRACKING_URL or any(
            ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in url):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    return provider, url
