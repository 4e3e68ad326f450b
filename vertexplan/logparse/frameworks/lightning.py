"""PyTorch Lightning (`lightning run`, or any script with a `Trainer`).

Checked against lightning 2.0-2.5 (pytorch_lightning 1.9 alike): the TQDM progress bar's
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
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "lightning"
VERSIONS = "lightning-2.0-2.5"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("Epoch ",)

_BAR = re.compile(r"^Epoch (\d+):\s+\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+) \[([^\]]*)\]$")
_RATE = re.compile(r"^\s*([0-9.]+)(it/s|s/it)$")
_POSTFIX = re.compile(r"^\s*([A-Za-z_][\w/.]*)=(\S+)$")
_SAVING = re.compile(
    r"Epoch (\d+), global step (\d+): '([^']+)' reached (\S+) \(best \S+\), "
    r"saving model to '([^']+)' as top \d+$")


@dataclass
class State:
    last_step: int = 0


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _BAR.match(line)
    if match:
        return _progress(match, state)
    match = _SAVING.search(line)
    if match:
        step = int(match.group(2))
        state.last_step = max(state.last_step, step)
        fields: dict[str, Any] = {"step": step, "path": match.group(5),
                                  "epoch": int(match.group(1)), "recognizer": RECOGNIZER}
        value = number(match.group(4))
        if value is not None:
            fields["metrics"] = {match.group(3): value}
        return Recognized(contract_events.CHECKPOINT_SAVED, fields)
    return None


def _progress(match: re.Match[str], state: State) -> Recognized | None:
    epoch, batch, per_epoch = (int(match.group(i)) for i in (1, 2, 3))
    if batch == 0 or batch > per_epoch:
        return None
    fields: dict[str, Any] = {"step": epoch * per_epoch + batch, "epoch": epoch,
                              "step_estimated": True, "recognizer": RECOGNIZER}
    # "[00:05<00:06,  8.91it/s, v_num=0, train_loss=2.310]"
    for part in match.group(4).split(",")[1:]:
        rate = _RATE.match(part)
        if rate:
            value = number(rate.group(1))
            if value:
                fields["step_time_s"] = 1 / value if rate.group(2) == "it/s" else value
            continue
        pair = _POSTFIX.match(part)
        if pair and _training_loss(pair.group(1)) and "loss" not in fields:
            fields["loss"] = number(pair.group(2))
    state.last_step = fields["step"]
    return Recognized(contract_events.STEP, fields)


def _training_loss(key: str) -> bool:
    # A validation or test loss shown on the same bar is no step's loss.
    return (key == "loss" or key.endswith("_loss")) and not key.startswith(("val", "test"))
