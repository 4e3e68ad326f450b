"""Accelerate's own checkpoint lines (a training loop of a team's own, launched with
`accelerate launch`): `Accelerator.save_state` logs "Saving current state to <folder>" and
`load_state` "Loading states from <folder>" (accelerate 1.15, accelerator.py; INFO, shown when
the script configures logging at INFO, as Accelerate's examples do).

An Accelerate loop prints its steps as it likes: read here is what transformers'
examples/pytorch/*_no_trainer.py loops print by convention, a tqdm bar over the run's steps with
the loss as its postfix and "epoch N: ..." evaluations (loop_bar.py), only for a job known to run
Accelerate (its command, `accelerate launch`, or the request's `framework`): another job's bar is
no step. A loop that prints no loss gets its steps from the callbacks' tracker
(callbacks/vcp_callbacks/accelerate_tracker.py, exact). The checkpoint's step is read from its
folder's name where the loop names it by step, as Accelerate's examples do (`step_<N>`); a
folder named otherwise (`epoch_2`, automatic naming's `checkpoint_<k>`, which counts saves)
tells no step, and the line stays a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract import events as contract_events
from vertexplan.logparse.frameworks import loop_bar
from vertexplan.logparse.frameworks.common import Recognized, tag

NAME = "accelerate"
VERSIONS = "accelerate-1.15+tqdm-4.70"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("current state", "Loading states", *loop_bar.MARKERS)

_SAVING = re.compile(r"Saving current state to (\S+)$")
_LOADING = re.compile(r"Loading states from (\S+)$")
_STEP_FOLDER = re.compile(r"(?:^|/)step_(\d+)/?$")


@dataclass
class State:
    last_step: int = 0
    last_loss: float | None = None
    bar_loss: float | None = None
    postfix_first: bool = False
    total_steps: int = 0
    finished: bool = False
    # Whether the job is known to run Accelerate (the registry says): only then is a bar read.
    loop: bool = False


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    if state.loop:
        found = loop_bar.read_bar(line, state, RECOGNIZER) or loop_bar.read_eval(
            line, state, RECOGNIZER)
        if found is not None:
            return found
    for pattern, event in ((_SAVING, contract_events.CHECKPOINT_SAVED),
                           (_LOADING, contract_events.RESUMED)):
        match = pattern.search(line)
        if match is None:
            continue
        path = match.group(1)
        named = _STEP_FOLDER.search(path)
        if named is None:
            return None
        state.last_step = int(named.group(1))
        if event == contract_events.RESUMED:
            state.last_loss, state.bar_loss, state.finished = None, None, False
        return Recognized(event, {"step": state.last_step, "path": path,
                                  "recognizer": RECOGNIZER})
    return None
