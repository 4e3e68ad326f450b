"""DeepSpeed's engine (`deepspeed train.py`, or any script calling deepspeed.initialize).

Checked against deepspeed 0.12-0.16 (runtime/engine.py) and 0.19 (a real CPU run here; 0.19
logs at WARNING unless the script raises DeepSpeed's logger to INFO, and prints a `step=0`
line at initialize, read as nothing): every `steps_per_print` steps
(10 by default) `_report_progress` logs, through log_dist on rank 0,
"[2025-01-01 12:00:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=0,
lr=[0.0001], mom=[(0.9, 0.999)]"; `_save_checkpoint` logs "[Rank 0] Saving model checkpoint:
/out/global_step10/mp_rank_00_model_states.pt".

Exact: the step (the engine's global step), the first parameter group's learning rate, the
checkpoint file's path; its step is read from DeepSpeed's default tag folder `global_stepN`,
or else the last step line's. The engine prints no loss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "deepspeed"
VERSIONS = "deepspeed-0.12-0.19"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("step", "heckpoint")  # "End Load checkpoint" holds the second

_STEP = re.compile(r"\[Rank \d+\] step=(\d+), skipped=(\d+), lr=\[([^\]]*)\]")
_SAVING = re.compile(r"Saving model checkpoint: (\S+)$")
_TAG_STEP = re.compile(r"global_step(\d+)(?:/|$)")
# load_checkpoint's end (0.19: "[Rank 0] [Torch] End Load checkpoint from <file>...").
_LOADED = re.compile(r"End Load checkpoint from (\S+?)\.{0,3}$")


@dataclass
class State:
    last_step: int = 0
    resumed_from: str = ""


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _STEP.search(line)
    if match:
        step = int(match.group(1))
        if step == 0:  # the engine's summary at initialize: no step done yet
            return None
        state.last_step = step
        fields: dict[str, Any] = {"step": step, "skipped": int(match.group(2)),
                                  "recognizer": RECOGNIZER}
        first = match.group(3).split(",", 1)[0].strip()
        if first:
            fields["lr"] = number(first)
        return Recognized(contract_events.STEP, fields)
    match = _LOADED.search(line)
    if match:
        path = match.group(1)
        tagged = _TAG_STEP.search(path)
        # The engine loads the same file twice (its module, then its optimizer's state).
        if tagged is None or path == state.resumed_from:
            return None
        state.last_step, state.resumed_from = int(tagged.group(1)), path
        return Recognized(contract_events.RESUMED, {
            "step": state.last_step, "path": path, "recognizer": RECOGNIZER})
    match = _SAVING.search(line)
    if match:
        path = match.group(1)
        tagged = _TAG_STEP.search(path)
        step = int(tagged.group(1)) if tagged else state.last_step
        return Recognized(contract_events.CHECKPOINT_SAVED, {
            "step": step, "path": path, "recognizer": RECOGNIZER})
    return None
