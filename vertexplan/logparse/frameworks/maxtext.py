"""MaxText (`python3 -m MaxText.train ...`, newer `-m maxtext.trainers.pre_train.train`).

Checked against MaxText's own documented run (docs/guides/monitoring_and_debugging/
understand_logs_and_metrics.md, a 10-step run on a TPU v5p-8 with JAX 0.7.2, and the
checkpointing code's messages): its configuration lines ("Config param steps: 10", "Config
param checkpoint_dir: gs://.../checkpoints/"), the device count ("Num_devices: 4, shape
(...)"), one line per step ("completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924,
Tokens/s/device: 8672.758, total_weights: 196608, loss: 10.374") and a synchronous save
("saved a checkpoint at step 9", later "Saved a checkpoint at step 9."). An asynchronous
save's start ("Started an asynchronous checkpoint save for step 9") is no checkpoint yet.

Exact: MaxText's own step (counted from 0, as its checkpoints are named), the loss, the step
time, TFLOP/s and tokens/s per device (tokens_per_s is the job's once the device count is
known), the checkpoint's step folder under checkpoint_dir (Orbax's `<dir>/<step>`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "maxtext"
VERSIONS = "maxtext-2025"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("completed step", "heckpoint", "Config param", "Num_devices")

_STEP = re.compile(
    r"completed step: (\d+), seconds: (\S+), TFLOP/s/device: (\S+), Tokens/s/device: (\S+), "
    r"total_weights: (\d+), loss: (\S+?)(?:,|$)")
_CONFIG = re.compile(r"^Config param (steps|checkpoint_dir): (\S+)$")
_DEVICES = re.compile(r"^Num_devices: (\d+)")
_SAVED = re.compile(r"^[Ss]aved a checkpoint at step (\d+)\.?$")


@dataclass
class State:
    folder: str = ""
    total_steps: int = 0
    devices: int = 0


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _STEP.search(line)
    if match:
        return _step(match, state)
    match = _CONFIG.match(line)
    if match:
        if match.group(1) == "steps":
            steps = number(match.group(2))
            state.total_steps = int(steps) if steps and 0 < steps < 10**12 else 0
        else:
            state.folder = match.group(2).rstrip("/")
        return None
    match = _DEVICES.match(line)
    if match:
        state.devices = min(int(match.group(1)), 10**6)
        return None
    match = _SAVED.match(line)
    if match and state.folder:
        step = int(match.group(1))
        return Recognized(contract_events.CHECKPOINT_SAVED, {
            "step": step, "path": f"{state.folder}/{step}", "recognizer": RECOGNIZER})
    return None


def _step(match: re.Match[str], state: State) -> Recognized:
    per_device = number(match.group(4))
    fields: dict[str, Any] = {
        "step": int(match.group(1)), "loss": number(match.group(6)),
        "step_time_s": number(match.group(2)), "tflops_per_device": number(match.group(3)),
        "tokens_per_s_per_device": per_device, "recognizer": RECOGNIZER}
    if per_device is not None and state.devices:
        fields["tokens_per_s"] = per_device * state.devices
    if state.total_steps:
        fields["total_steps"] = state.total_steps
    return Recognized(contract_events.STEP, fields)
