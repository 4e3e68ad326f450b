"""PyTorch Lightning (`lightning run`, or any script with a `Trainer`).

Checked against lightning 2.0-2.6 (pytorch_lightning 1.9 alike; 2.6 on a real run here, with
TQDMProgressBar: Rich's bar, the default where rich is installed, prints only its end without a
terminal): the TQDM progress bar's
training line `Epoch 0:  45%|████▌     | 45/100 [00:05<00:06,  8.91it/s, v_num=0,
train_loss=2.310]` (rewritten in place with carriage returns: the last state counts), and
ModelCheckpoint(verbose=True)'s "Epoch 0, global step 100: 'val_loss' reached 2.10000 (best
2.10000), saving model to '/out/epoch=0-step=100.ckpt' as top 1".

Exact: the checkpoint's step and path (Lightning's global step), the monitored value, the
loss as the bar shows it (rounded to the bar's 3 significant digits; the key is any `loss`
or `*_loss` the module logs with prog_bar=True). Estimated (`step_estimated: true`): the
global step of a progress line, which the bar does not print: epoch x batches per epoch +
batch, off when gradients are accumulated or the bar counts validation batches (1.x).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, read_bar_tail, tag

NAME = "lightning"
VERSIONS = "lightning-2.0-2.6"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("Epoch ", "stopped", "Restored")

_BAR = re.compile(r"^Epoch (\d+):\s+\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+) \[([^\]]*)\]$")
_SAVING = re.compile(
    r"Epoch (\d+), global step (\d+): '([^']+)' reached (\S+) \(best \S+\), "
    r"saving model to '([^']+)' as top \d+$")


# A fit resumed with ckpt_path (rank 0, INFO); the step is the checkpoint's file name's, as
# ModelCheckpoint names it (epoch=1-step=6.ckpt).
_RESTORED = re.compile(r"Restored all states from the checkpoint at (\S+)$")
_STEP_IN_NAME = re.compile(r"(?:^|[-_/])step=(\d+)(?:[-_.]|$)")
# Lightning's last word of a fit that reached its limit (rank 0, INFO).
_STOPPED = re.compile(r"`Trainer\.fit` stopped: `(max_steps|max_epochs)=(\d+)` reached\.$")


@dataclass
class State:
    last_step: int = 0
    last_loss: float | None = None
    # The loss the bar showed on its previous redraw (a step's own shows as it changes).
    bar_loss: float | None = None


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _BAR.match(line)
    if match:
        return _progress(match, state)
    match = _RESTORED.search(line)
    if match:
        path = match.group(1)
        named = _STEP_IN_NAME.search(path.rsplit("/", 1)[-1])
        if named is None:
            return None
        state.last_step, state.last_loss, state.bar_loss = int(named.group(1)), None, None
        return Recognized(contract_events.RESUMED, {"step": state.last_step, "path": path,
                                                   "recognizer": RECOGNIZER})
    match = _STOPPED.search(line)
    if match:
        return Recognized(contract_events.RUN_FINISHED, {
            "step": state.last_step, "final_loss": state.last_loss, "recognizer": RECOGNIZER})
    match = _SAVING.search(line)
    if match:
        step = int(match.group(2))
        # Not the bar's position: the bar shows this step's loss after the checkpoint is saved.
        fields: dict[str, Any] = {"step": step, "path": match.group(5),
                                  "epoch": int(match.group(1)), "recognizer": RECOGNIZER}
        value = number(match.group(4))
        if value is not None:
            fields["metrics"] = {match.group(3): value}
        return Recognized(contract_events.CHECKPOINT_SAVED, fields)
    return None


def _progress(match: re.Match[str], state: State) -> Recognized | None:
    """A step at the bar's count, once its own loss is shown. The bar is redrawn when the count
    moves and again when the postfix changes: in between, the count is the new step's and the
    loss still the last one's (lightning 2.6 without a terminal, every redraw its own line).
    So a step is read from a line of a count past the last one read whose loss differs from
    the previous redraw's; the bar's other redraws (the count moving before its loss, the
    validation's) read nothing. Two steps showing the same rounded loss: the second is read
    at the next."""
    epoch, batch, per_epoch = (int(match.group(i)) for i in (1, 2, 3))
    step = epoch * per_epoch + batch
    fields: dict[str, Any] = {"step": step, "epoch": epoch,
                              "step_estimated": True, "recognizer": RECOGNIZER}
    # "[00:05<00:06,  8.91it/s, v_num=0, train_loss=2.310]"
    read_bar_tail(match.group(4), fields)
    loss, shown = fields.get("loss"), state.bar_loss
    state.bar_loss = loss
    if batch == 0 or batch > per_epoch or loss is None or loss == shown \
            or step <= state.last_step:
        return None
    state.last_step, state.last_loss = step, loss
    return Recognized(contract_events.STEP, fields)

