"""The trainers' events in a Ray job's output, and its lines with the severity each states.

Ray forwards each worker's stdout to the job's logs with a prefix naming the worker
(`(RayTrainWorker pid=123) {...}`) and sometimes ANSI colours; the event line after it is the
same JSON object the trainer prints under torchrun (DESIGN.md, the event contract). Every rank
prints its own `run_started`; steps, checkpoints and `run_finished` come from rank 0, but Ray may
repeat a line, so steps and checkpoints are kept once each.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
MAX_STEPS = 2000
# The worker Ray forwarded a line from: `(RayTrainWorker pid=123, ip=10.0.0.2) `. One space
# separates it from the line, and only that one is Ray's: the spaces after it are the line's
# own (a traceback's indented lines go on with the traceback).
_WORKER_PREFIX = re.compile(r"^\([^()]{1,200}\) ?")
# A level word as Python's logging and Ray's own log lines write it, near the line's start.
_LEVEL = re.compile(r"\b(DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)\b")
LEVEL_ZONE = 80
# Cloud Logging's numbers, as the log store keeps them (vertexplan.logparse.entries).
LEVELS = {"DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "WARN": 400,
          "ERROR": 500, "CRITICAL": 600, "FATAL": 600}
INFO = LEVELS["INFO"]
ERROR = LEVELS["ERROR"]
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b(:|$)")
_PY_WARNING = re.compile(r"\b[A-Z]\w*Warning: ")


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based, in the output as Ray returned it
    severity: int
    text: str  # without terminal colours


def lines(text: str, after: int = 0) -> list[LogLine]:
    """The output's lines, each with the severity it states: a logging level near its start
    (after Ray's worker prefix), a Python warning, or a traceback (every line of it, to the
    exception, is an ERROR). A line that states none is INFO.

    `after`: only the lines numbered above it, read as they would be in the whole output. Ray
    gives a job's whole output at every read, so a poller that has stored the first lines
    asks for the rest: the earlier lines are split (in C) but not read, and what the line
    before the first one asked for tells (the traceback it may be in) is found by walking
    back over the traceback's own lines only."""
    raws = text.splitlines()
    first = min(max(after, 0), len(raws))
    out: list[LogLine] = []
    in_traceback = _traceback_runs_on(raws, first)
    for number in range(first + 1, len(raws) + 1):
        line = _ANSI.sub("", raws[number - 1])
        body = _WORKER_PREFIX.sub("", line, count=1)
        if body.startswith(_TRACEBACK):
            in_traceback = True
        if in_traceback:
            severity = ERROR
            in_traceback = _continues_traceback(body)
        elif _EXCEPTION.match(body):
            severity = ERROR
        else:
            severity = _stated_level(body)
        out.append(LogLine(number, severity, line))
    return out


def _continues_traceback(body: str) -> bool:
    """Whether a traceback goes on after this line of it: it ends with the exception's own
    (unindented) line."""
    return body.startswith((" ", "\t", _TRACEBACK)) or not body.strip()


def _traceback_runs_on(raws: list[str], count: int) -> bool:
    """Whether the line after the first `count` is inside a traceback begun before it: the
    lines before it, back to a traceback's first line, all go on with it."""
    for index in range(count - 1, -1, -1):
        body = _WORKER_PREFIX.sub("", _ANSI.sub("", raws[index]), count=1)
        if not _continues_traceback(body):
            return False
        if body.startswith(_TRACEBACK):
            return True
    return False


def _stated_level(body: str) -> int:
    level = _LEVEL.search(body[:LEVEL_ZONE])
    if level:
        return LEVELS[level.group(1)]
    if _PY_WARNING.search(body):
        return LEVELS["WARNING"]
    return INFO


def events_in(text: str, after: int = 0) -> list[dict[str, Any]]:
    """The trainers' events in the output's lines numbered above `after`."""
    found = []
    for line in text.splitlines()[max(after, 0):]:
        line = _ANSI.sub("", line)
        start = line.find("{")
        if start < 0:
            continue
        try:
            value = json.loads(line[start:])
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("event"), str):
            found.append(value)
    return found


def summary(text: str, *, after: int = 0, before: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """Ranks seen, the loss curve (step -> loss), checkpoints and the end, from the output.

    `before`, `after`: the summary of the output's first lines and how many they were, so only
    the lines after them are read (Ray gives the whole output at every poll). `before` may
    have read lines numbered above `after` too (a last line not whole yet): reading lines again
    in their order changes nothing, as each field is a union or the last event's of its step."""
    if before is None or after <= 0 or not _is_summary(before):
        after, before = 0, summary_of_nothing()
    ranks: set[int] = set(before["ranks"])
    losses: dict[int, float] = {step: loss for step, loss in before["loss"]}
    checkpoints: dict[int, str] = {c["step"]: c["path"] for c in before["checkpoints"]}
    finished: dict[str, Any] | None = before["finished"]
    for event in events_in(text, after):
        kind = event["event"]
        step = event.get("step")
        if kind == contract_events.RUN_STARTED and isinstance(event.get("rank"), int):
            ranks.add(event["rank"])
        elif kind == contract_events.STEP and isinstance(step, int) \
                and isinstance(event.get("loss"), int | float):
            losses[step] = float(event["loss"])
        elif kind == contract_events.CHECKPOINT_SAVED and isinstance(step, int):
            checkpoints[step] = str(event.get("path", ""))[:500]
        elif kind == contract_events.CHECKPOINT_DELETED and isinstance(step, int):
            checkpoints.pop(step, None)
        elif kind == contract_events.RUN_FINISHED:
            finished = {"step": step, "final_loss": event.get("final_loss"),
                        "wall_s": event.get("wall_s")}
    steps = sorted(losses)[-MAX_STEPS:]
    return {
        "ranks": sorted(ranks),
        "loss": [[s, losses[s]] for s in steps],
        "checkpoints": [{"step": s, "path": checkpoints[s]} for s in sorted(checkpoints)],
        "finished": finished,
    }


def summary_of_nothing() -> dict[str, Any]:
    return {"ranks": [], "loss": [], "checkpoints": [], "finished": None}


def _is_summary(value: Any) -> bool:
    """A summary as `summary` makes it (a row written before summaries were kept may not be)."""
    return isinstance(value, dict) and isinstance(value.get("ranks"), list) \
        and isinstance(value.get("loss"), list) \
        and isinstance(value.get("checkpoints"), list) and "finished" in value
