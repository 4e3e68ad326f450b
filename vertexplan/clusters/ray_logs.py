"""The trainers' events in a Ray job's output.

Ray forwards each worker's stdout to the job's logs with a prefix naming the worker
(`(RayTrainWorker pid=123) {...}`) and sometimes ANSI colours; the event line after it is the
same JSON object the trainer prints under torchrun (DESIGN.md, the event contract). Every rank
prints its own `run_started`; steps, checkpoints and `run_finished` come from rank 0, but Ray may
repeat a line, so steps and checkpoints are kept once each.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
MAX_STEPS = 2000


def events_in(text: str) -> list[dict[str, Any]]:
    found = []
    for line in text.splitlines():
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


def summary(text: str) -> dict[str, Any]:
    """Ranks seen, the loss curve (step -> loss), checkpoints and the end, from the output."""
    ranks: set[int] = set()
    losses: dict[int, float] = {}
    checkpoints: dict[int, str] = {}
    finished: dict[str, Any] | None = None
    for event in events_in(text):
        kind = event["event"]
        step = event.get("step")
        if kind == "run_started" and isinstance(event.get("rank"), int):
            ranks.add(event["rank"])
        elif kind == "step" and isinstance(step, int) and isinstance(event.get("loss"),
                                                                      int | float):
            losses[step] = float(event["loss"])
        elif kind == "checkpoint_saved" and isinstance(step, int):
            checkpoints[step] = str(event.get("path", ""))[:500]
        elif kind == "checkpoint_deleted" and isinstance(step, int):
            checkpoints.pop(step, None)
        elif kind == "run_finished":
            finished = {"step": step, "final_loss": event.get("final_loss"),
                        "wall_s": event.get("wall_s")}
    steps = sorted(losses)[-MAX_STEPS:]
    return {
        "ranks": sorted(ranks),
        "loss": [[s, losses[s]] for s in steps],
        "checkpoints": [{"step": s, "path": checkpoints[s]} for s in sorted(checkpoints)],
        "finished": finished,
    }
