"""DeepSpeed's engine (`deepspeed train.py`, or any script calling deepspeed.initialize).

Checked against deepspeed 0.12-0.16 (runtime/engine.py) and 0.19 (a real CPU run here; 0.19
logs at WARNING unless the script raises DeepSpeed's logger to INFO, and prints a `step=0`
line at initialize, read as nothing): every `steps_per_print` steps
(10 by default) `_report_progress` logs, through log_dist on rank 0,
"[2025-01-01 12:00:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=0,
lr=[0.0001], mom=[(0.9, 0.999)]"; `_save_checkpoint` logs "[Rank 0] Saving model checkpoint:
/out/global_step10/mp_rank_00_model_states.pt".

Exact: the step (the engine's global step), the first parameter group's learning rate, the
checkpoint's folder (the tag folder the file is saved in, `<save_dir>/global_stepN` by default:
what load_checkpoint takes as its folder and tag, and what a resubmission passes as
--resume_from_checkpoint); its step is read from the default tag `global_stepN`, or else the
last step line's.

The engine prints no loss and no total. A DeepSpeed loop of a team's own is read as an
Accelerate loop is (loop_bar.py): its tqdm bar over the run's steps with the loss as postfix,
"epoch N: ..." evaluations; only in a job known to run DeepSpeed. Once such a bar is read, the
bar's redraws are the steps (with the loss and the total) and the engine's step lines give
them their learning rate (the engine prints step S before the loop redraws its bar at S);
no step is read twice (a line for a step at or before the last read is none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events
from vertexplan.logparse.frameworks import loop_bar
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "deepspeed"
VERSIONS = "deepspeed-0.12-0.19+tqdm-4.70"
RECOGNIZER = tag(NAME, VERSIONS)
# "End Load checkpoint" holds the second; a loop's bar and evaluations the others.
MARKERS = ("step", "heckpoint", *loop_bar.MARKERS)

_STEP = re.compile(r"\[Rank \d+\] step=(\d+), skipped=(\d+), lr=\[([^\]]*)\]")
_SAVING = re.compile(r"Saving model checkpoint: (\S+)$")
_TAG_STEP = re.compile(r"global_step(\d+)(?:/|$)")
# load_checkpoint's end (0.19: "[Rank 0] [Torch] End Load checkpoint from <file>...").
_LOADED = re.compile(r"End Load checkpoint from (\S+?)\.{0,3}$")


@dataclass
class State:
    last_step: int = 0
    resumed_from: str = ""
    # The loop's bar (loop_bar.LoopState), read only where the registry says the job runs
    # DeepSpeed (`loop`); once one is read (`bar`), the engine's step lines give their lr.
    last_loss: float | None = None
    bar_loss: float | None = None
    postfix_first: bool = False
    total_steps: int = 0
    finished: bool = False
    loop: bool = False
    bar: bool = False
    engine_step: int = 0
    engine_lr: float | None = None


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    if state.loop:
        found = _loop_line(line, state)
        if found is not None:
            return found
    match = _STEP.search(line)
    if match:
        step = int(match.group(1))
        if step == 0:  # the engine's summary at initialize: no step done yet
            return None
        first = match.group(3).split(",", 1)[0].strip()
        lr = number(first) if first else None
        if state.bar or step <= state.last_step:
            state.engine_step, state.engine_lr = step, lr
            return None
        state.last_step = step
        fields: dict[str, Any] = {"step": step, "skipped": int(match.group(2)),
                                  "recognizer": RECOGNIZER}
        if first:
            fields["lr"] = lr
        return Recognized(contract_events.STEP, fields)
    match = _LOADED.search(line)
    if match:
        path = match.group(1)
        tagged = _TAG_STEP.search(path)
        # The engine loads the same file twice (its module, then its optimizer's state).
        if tagged is None or path == state.resumed_from:
            return None
        state.last_step, state.resumed_from = int(tagged.group(1)), path
        state.last_loss, state.bar_loss, state.finished = None, None, False
        return Recognized(contract_events.RESUMED, {
            "step": state.last_step, "path": _folder(path), "recognizer": RECOGNIZER})
    match = _SAVING.search(line)
    if match:
        path = match.group(1)
        tagged = _TAG_STEP.search(path)
        step = int(tagged.group(1)) if tagged else state.last_step
        return Recognized(contract_events.CHECKPOINT_SAVED, {
            "step": step, "path": _folder(path), "recognizer": RECOGNIZER})
    return None


def _folder(path: str) -> str:
    """The tag folder a checkpoint file is saved in (`.../global_step6`)."""
    folder = path.rsplit("/", 1)[0] if "/" in path else path
    return folder or path


def _loop_line(line: str, state: State) -> Recognized | None:
    found = loop_bar.read_bar(line, state, RECOGNIZER)
    if found is not None and found.event == contract_events.STEP:
        state.bar = True
        if state.engine_step == found.fields["step"] and state.engine_lr is not None:
            found.fields["lr"] = state.engine_lr
    return found or loop_bar.read_eval(line, state, RECOGNIZER)
