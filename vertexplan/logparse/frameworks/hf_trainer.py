"""Hugging Face `Trainer` (and scripts launched with Accelerate that use it).

Checked against transformers 4.40-4.57 and 5.24 (a tiny Llama trained with Trainer on the CPU;
5.x prints each value as a string and prefixes its logger's lines with "[transformers] "):
ProgressCallback.on_log writes `str(logs)` with the
epoch rounded to 2 places (`{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 5e-05,
'epoch': 0.5}`), eval dicts (`{'eval_loss': 2.1, 'eval_runtime': ..., 'epoch': 1.0}`), the
final dict (`{'train_runtime': 12.3, ..., 'train_loss': 2.2, 'epoch': 3.0}`); Trainer._save
logs "Saving model checkpoint to <output_dir>/checkpoint-<step>" and a resume logs
"  Continuing training from global step <step>" (5.x: "Resuming training from checkpoint with
epoch <e> and global step <step>") (both at INFO, which the default verbosity
hides: they print with `log_level="info"`).

What is exact and what is estimated: loss, learning rate, eval metrics, checkpoint steps and
paths, the resumed step and the run's wall time are read as printed. The step is not printed
on loss lines: it is the count of loss lines times the logging interval (logging_steps),
which the checkpoints tell. Trainer logs before it saves, so checkpoint-S after n loss lines
means n = floor(S / interval): the interval lies in (S/(n+1), S/n]. The ranges of the
checkpoints seen are intersected; one integer left is the exact interval. Until then the
step uses the largest integer left (S/n when save_steps is a multiple of logging_steps; 1
before any checkpoint) and carries `step_estimated: true`. With save_steps a multiple of
logging_steps i the range narrows to i once n + 1 >= i (checkpoint-100 after 10 lines: 10).
A resume line restarts the count from the step it names. `logging_first_step` (an extra line
at step 1) puts the count one ahead: its steps stay estimated.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "hf_trainer"
VERSIONS = "transformers-4.40-5.24"
RECOGNIZER = tag(NAME, VERSIONS)
# Substrings one of this module's lines must hold (the registry's prefilter): short, and
# shared between modules where they can be, so that the prefilter tests few.
MARKERS = ("{'", "heckpoint", "step")
# A Trainer dict is a few dozen keys at most; literal_eval is given nothing longer.
MAX_DICT = 1500
MAX_KEYS = 40

# Python prints a NaN or infinite loss as a bare name, which no literal may hold: such a
# value is read as null (the contract's loss is nullable), the rest of the dict as printed.
_NON_FINITE = re.compile(r"(?<=: )-?(?:nan|inf)(?=[,}])")
_CHECKPOINT = re.compile(r"Saving model checkpoint to (\S*checkpoint-(\d+))/?$")
# 4.x: "Continuing training from global step 6"; 5.x: "Resuming training from checkpoint with
# epoch 0 and global step 6".
_CONTINUING = re.compile(r"(?:Continuing training from|Resuming training from checkpoint with "
                         r"epoch \d+ and) global step (\d+)$")
# The run's length, in Trainer's banner before the first step ("  Total optimization steps =
# 1,000"): every step line then carries it, for the page's progress and ETA.
_TOTAL = re.compile(r"^(?:\[transformers\] )?\s*Total optimization steps = ([\d,]+)$")
_STEP_KEYS = ("loss", "learning_rate", "epoch")


@dataclass
class State:
    loss_lines: int = 0           # loss lines since the start (or the resume)
    base_step: int = 0            # the step the count starts from (a resume's)
    # What the checkpoints say of the logging interval: above low, at most high (None: any).
    low: Fraction = Fraction(0)
    high: Fraction | None = None
    last_step: int = 0
    last_loss: float | None = None
    # Whether last_step was a guess (an evaluation at it is then placed again with it).
    last_estimated: bool = False
    total_steps: int = 0


def new_state() -> State:
    return State()


def flat_dict(text: str) -> dict[str, float | None] | None:
    """A printed dict of names to numbers (None for nan and inf), or None: anything longer
    than MAX_DICT, not a literal (a call, a name), nested, or with a value that is not a
    number. Never eval."""
    if len(text) > MAX_DICT or not (text.startswith("{'") and text.endswith("}")):
        return None
    try:
        value = ast.literal_eval(_NON_FINITE.sub("None", text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not value or len(value) > MAX_KEYS:
        return None
    out: dict[str, float | None] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            return None
        read = _value(item)
        if read is None and item is not None:
            return None
        out[key] = read
    return out


def _value(item: object) -> float | None:
    # Some versions print a value formatted as a string ('2.31'): read it as a number.
    if isinstance(item, str):
        return number(item) if len(item) < 40 else None
    if isinstance(item, bool) or not isinstance(item, (int, float)):
        return None
    try:
        value = float(item)
    except OverflowError:  # an integer of hundreds of digits
        return None
    return value if math.isfinite(value) else None


def _interval(state: State) -> tuple[int, bool]:
    """The logging interval and whether it is exact (the only integer the checkpoints left)."""
    if state.high is None:  # only a lower bound (a checkpoint before any loss line), or none
        return math.floor(state.low) + 1, False
    first, last = math.floor(state.low) + 1, math.floor(state.high)
    return max(last, 1), first == last


def _learn(state: State, step: int) -> None:
    since, lines = step - state.base_step, state.loss_lines
    if since <= 0:
        return
    low = Fraction(since, lines + 1)
    high = Fraction(since, lines) if lines else None
    new_low = max(state.low, low)
    new_high = high if state.high is None else (
        state.high if high is None else min(state.high, high))
    if new_high is not None and math.floor(new_low) + 1 > math.floor(new_high):
        # No integer fits every checkpoint (an extra first-step line, a changed config):
        # trust the newest one alone.
        new_low, new_high = low, high
    state.low, state.high = new_low, new_high


def _step(state: State) -> tuple[int, bool]:
    interval, exact = _interval(state)
    return state.base_step + state.loss_lines * interval, not exact


# trainer_state.json is a few kB; one with a long log_history is read no further than this.
MAX_TRAINER_STATE = 1 << 20


def from_trainer_state(text: bytes | None) -> State | None:
    """The state a run resumed from a checkpoint starts in, from the checkpoint's
    trainer_state.json (Trainer writes global_step, logging_steps and max_steps into it): the
    logging interval exact from the first line, counted from the checkpoint's step, the run's
    total known. None for anything that is not such a file."""
    if text is None or len(text) > MAX_TRAINER_STATE:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    step, interval, total = (data.get(k) for k in ("global_step", "logging_steps", "max_steps"))
    if not all(type(v) is int and 0 <= v < 10**12 for v in (step, interval, total)) \
            or not interval:
        return None
    return State(base_step=step, last_step=step, low=Fraction(interval - 1),
                 high=Fraction(interval), total_steps=total)


def restep(state: State, counted: object) -> tuple[int, bool] | None:
    """Where an estimated step line (its `counted` field) lies by what the checkpoints seen
    since say, and whether that is exact; None for a `counted` this did not write."""
    if not (isinstance(counted, list) and len(counted) == 2
            and all(type(n) is int and n >= 0 for n in counted)):
        return None
    base, lines = counted
    if base != state.base_step:  # counted before a resume: its interval is not this one
        return None
    interval, exact = _interval(state)
    return base + lines * interval, exact


def recognize(line: str, state: State) -> Recognized | None:
    if line.startswith("{'"):
        values = flat_dict(line)
        return None if values is None else _from_dict(values, state)
    match = _CHECKPOINT.search(line)
    if match:
        step = int(match.group(2))
        _learn(state, step)
        state.last_step = max(state.last_step, step)
        return Recognized(contract_events.CHECKPOINT_SAVED,
                          {"step": step, "path": match.group(1), "recognizer": RECOGNIZER})
    match = _TOTAL.match(line)
    if match:
        total = int(match.group(1).replace(",", ""))
        if 0 < total < 10**12:
            state.total_steps = total
        return None
    match = _CONTINUING.search(line)
    if match:
        step = int(match.group(1))
        state.base_step, state.loss_lines, state.last_step = step, 0, step
        state.last_estimated = False
        return Recognized(contract_events.RESUMED, {"step": step, "recognizer": RECOGNIZER})
    return None


def _from_dict(values: dict[str, float | None], state: State) -> Recognized | None:
    if all(key in values for key in _STEP_KEYS):
        state.loss_lines += 1
        step, estimated = _step(state)
        state.last_step, state.last_loss = step, values["loss"]
        state.last_estimated = estimated
        fields: dict[str, Any] = {"step": step, "loss": values["loss"],
                                  "lr": values["learning_rate"], "epoch": values["epoch"],
                                  "step_estimated": estimated, "recognizer": RECOGNIZER}
        if estimated:
            # What restep() needs to place this line again once the checkpoints say more.
            fields["counted"] = [state.base_step, state.loss_lines]
        if state.total_steps:
            fields["total_steps"] = state.total_steps
        if "grad_norm" in values:
            fields["grad_norm"] = values["grad_norm"]
        return Recognized(contract_events.STEP, fields)
    metrics = {key[len("eval_"):]: value for key, value in values.items()
               if key.startswith("eval_")}
    if metrics and set(values) - set(("epoch",)) == {f"eval_{k}" for k in metrics}:
        fields = {"step": state.last_step, "metrics": metrics, "recognizer": RECOGNIZER}
        if state.last_estimated:
            fields["counted"] = [state.base_step, state.loss_lines]
        return Recognized(contract_events.EVAL, fields)
    if "train_runtime" in values and "train_loss" in values:
        return Recognized(contract_events.RUN_FINISHED, {
            "step": state.last_step, "final_loss": state.last_loss,
            "train_loss": values["train_loss"], "wall_s": values["train_runtime"],
            "recognizer": RECOGNIZER})
    return None
