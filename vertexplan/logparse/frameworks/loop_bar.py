"""What a training loop of a team's own prints by convention, for the loops' recognizers
(accelerate.py, deepspeed.py): the shape of transformers' examples/pytorch/*_no_trainer.py
scripts and of most PyTorch loops.

- A tqdm progress bar over the run's optimizer steps (`tqdm(range(max_train_steps))`), its
  loss as the bar's postfix (`bar.set_postfix(loss=loss.item())`):
  ` 50%|█████     | 6/12 [00:01<00:01,  5.00it/s, loss=3.21]` (tqdm 4.x's default format,
  any short description before it). The count is the step (exact: the loop's own), the total
  the run's (the page's ETA), the rate the step time, the postfix's `loss` (or any `*_loss`
  but a validation's) the loss, rounded as tqdm shows it (3 significant digits).
- An evaluation the loop logs as the examples do, `epoch 0: perplexity: 30.1 eval_loss: 3.4`
  or `epoch 0: {'accuracy': 0.8}` (behind a logging prefix), at the last step read.

Read only for a job that runs Accelerate or DeepSpeed (its command, first lines or request
say so): another program's bar (a download, a tokenizer's map) is no step, and a bar without
a loss in its postfix is read as nothing (a loop that prints no loss gets its steps from
vcp_callbacks' tracker). A bar per epoch over its batches gives its first epoch only (its
count starts again).

A bar is redrawn when its count moves and again when its postfix changes, in either order.
A loop that sets its loss first shows it so (a new loss at a count already read): from then on
a step is read when the count moves, with the loss it shows. Otherwise the count moves first,
with the last step's loss: a step is read at a count past the last one read once the loss
shown differs from the last step's (a step whose rounded loss repeats the previous one's is
read at the next that differs). Its redraw at the count of its total after that step is the
run's end.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, read_bar_tail
from vertexplan.logparse.frameworks.hf_trainer import flat_dict

MARKERS = ("%|", "epoch ")

_BAR = re.compile(r"^(?:[^|\[\]]{1,60}: )?\s*\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+) \[([^\]]*)\]$")
# A bar's last state with a line another writer printed right after it (the loop's logger
# writes into the bar's line, as tqdm left it without a newline, padded with blanks).
BAR_THEN_LINE = re.compile(r"^((?:[^|\[\]]{1,60}: )?\s*\d{1,3}%\|[^|]*\|\s*\d+/\d+ "
                           r"\[[^\]]*\])\s*(\S.*)$")
# The message starts the line or follows a logging prefix: the examples' " - " format or
# logging's default "INFO:name:", and accelerate.logging's "[RANK 0] " (accelerate 1.15).
_EPOCH = re.compile(r"(?:^|\s-\s|^[A-Z]+:[\w.]+:)(?:\[RANK \d+\] )?epoch (\d+): (.+)$")
_PAIR = re.compile(r"([A-Za-z_][\w/.-]*): (\S+)")
_PAIRS = re.compile(r"^(?:[A-Za-z_][\w/.-]*: \S+)(?: [A-Za-z_][\w/.-]*: \S+)*$")
MAX_METRICS = 40


class LoopState(Protocol):
    """The fields a loop's recognizer keeps for its bar (in its own saved State)."""

    last_step: int
    last_loss: float | None     # the last step's
    bar_loss: float | None      # the last redraw's
    postfix_first: bool
    total_steps: int
    finished: bool


def split_bar(text: str) -> list[str]:
    """A bar's state and the line printed after it, apart; any other text as it is."""
    if "%|" not in text:
        return [text]
    match = BAR_THEN_LINE.match(text)
    return [match.group(1), match.group(2)] if match else [text]


def read_bar(line: str, state: LoopState, recognizer: str) -> Recognized | None:
    """A step (or the run's end) from a redraw of the loop's bar; None for any other line
    and for a redraw that tells nothing new."""
    match = _BAR.match(line)
    if match is None:
        return None
    count, total = int(match.group(1)), int(match.group(2))
    if total <= 0 or count > total:
        return None
    fields: dict[str, Any] = {"step": count, "total_steps": total, "recognizer": recognizer}
    read_bar_tail(match.group(3), fields)
    loss = fields.get("loss")
    shown, state.bar_loss = state.bar_loss, loss
    if loss is None:
        return None
    if count > state.last_step:
        if state.postfix_first or loss != state.last_loss or state.last_loss is None:
            state.last_step, state.last_loss, state.total_steps = count, loss, total
            return Recognized(contract_events.STEP, fields)
        return None
    if loss != shown and not state.finished:
        # The postfix moved before the count: this loop sets its loss, then updates the bar.
        state.postfix_first = True
        return None
    if count == total == state.last_step and not state.finished:
        state.finished = True
        return Recognized(contract_events.RUN_FINISHED, {
            "step": count, "final_loss": state.last_loss, "recognizer": recognizer})
    return None


def read_eval(line: str, state: LoopState, recognizer: str) -> Recognized | None:
    """An evaluation the loop logged ("epoch N: name: value ..." or "epoch N: {dict}")."""
    match = _EPOCH.search(line)
    if match is None:
        return None
    text = match.group(2).strip()
    values: dict[str, float | None] | None
    if text.startswith("{'"):
        values = flat_dict(text)
    elif _PAIRS.match(text):
        values = {key: number(value) for key, value in _PAIR.findall(text)}
        if any(v is None for v in values.values()):
            return None
    else:
        return None
    if not values or len(values) > MAX_METRICS:
        return None
    metrics = {(k[len("eval_"):] if k.startswith("eval_") else k): v for k, v in values.items()}
    return Recognized(contract_events.EVAL, {
        "step": state.last_step, "epoch": int(match.group(1)), "metrics": metrics,
        "recognizer": recognizer})
