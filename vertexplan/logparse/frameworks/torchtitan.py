"""torchtitan (`torchrun ... -m torchtitan.train`).

Checked against the source of torchtitan 0.1-0.2 (train.py / components/metrics.py
MetricsProcessor.log, components/checkpoint.py) and 0.3.0 (their wheels), not a run: no
published version (0.1.0, 0.2.0, 0.2.1, 0.2.2, 0.3.0) trains on a CPU, by any flag, config or
environment variable of its own. Each, run with torch 2.13.0+cpu and triton installed (its
import needs it: models/moe/kernels.py, 0.3.0's overrides/fused_mla.py), takes the device type
"cuda" when torch finds no accelerator (tools/utils.py: `_get_available_device_type() or
"cuda"`, line 29 in 0.1.0, 28 in 0.2.0-0.2.1, 37 in 0.2.2, 55 in 0.3.0) and stops at
`device_module.set_device(self.device)` (train.py:81, :87, :89, :90; 0.3.0's trainer.py:301:
torch.cuda.set_device, AttributeError: module 'torch._C' has no attribute '_cuda_setDevice');
past it, DeviceMemoryMonitor (components/metrics.py) reads get_device_name and
get_device_properties, which torch.cpu lacks. tests/vertexplan/logparse/test_torchtitan_03.py
has the lines as 0.3.0's source formats them. The step line, coloured with ANSI codes, is
`step: 10  loss:  7.9834  memory:  1.23GiB(3.10%)  tps: 1,234  tflops: 12.34  mfu: 3.20%`
(newer versions add `grad_norm:` after the loss; older ones lack tflops; 0.3 prints
`mfu: N/A` where the device's peak is unknown), and with a
validator `validate step: 10  loss:  2.1234  memory: ...  tps: ...` (an eval event), behind
the logger's
`[rank0]:[titan] 2025-01-01 12:00:00,000 - root - INFO - ` prefix. Checkpoints:
"Checkpointing active. Checkpoints will be loaded from and saved to <folder>" at start,
"Saving the checkpoint (or staging if async is enabled)." then "Finished saving the
checkpoint (or staging if async is enabled) in 1.23 seconds." (older and 0.3: "Finished
saving the checkpoint in 1.23 seconds.", 0.3's async mode "Finished staging ..."), and
"Loading the checkpoint at step 500." on a resume (0.3: "Loading the checkpoint from
<folder>/step-500.", the step read from the folder's name).

Exact: step, loss, tokens per second (tps: per device, as printed), mfu, the resumed step.
The saved checkpoint's step is the last step line's (torchtitan saves after that step's log
when the intervals agree; a save between log lines is given the step logged before it), its
path `<folder>/step-<step>` (torchtitan's own naming); with no "Checkpointing active" line
seen no path is known and no checkpoint event is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, number, tag

NAME = "torchtitan"
VERSIONS = "torchtitan-0.1-0.3"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("step", "heckpoint")

_NUM = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?|nan|inf)"
# "step:" must start the message: after the logger's " - INFO - " or at the line's start.
_STEP = re.compile(
    r"(?:^|\s-\s[A-Z]+\s-\s)step:\s*(\d+)\s+loss:\s*" + _NUM
    + r"(?:\s+grad_norm:\s*" + _NUM + r")?"
    + r"\s+memory:\s*[0-9.]+GiB\([0-9.]+%\)\s+tps:\s*" + _NUM
    + r"(?:\s+tflops:\s*" + _NUM + r")?(?:\s+mfu:\s*(?:" + _NUM + r"%|N/A))?\s*$")
_VALIDATE = re.compile(r"(?:^|\s-\s[A-Z]+\s-\s)validate step:\s*(\d+)\s+loss:\s*" + _NUM
                       + r"\s+memory:")
_FOLDER = re.compile(r"Checkpoints will be loaded from and saved to (\S+)$")
_SAVED = re.compile(r"Finished (?:saving|staging) the checkpoint "
                    r"(?:\(or staging if async is enabled\) ?)?in ([0-9.]+) seconds\.?$")
_LOADING = re.compile(r"Loading the checkpoint at step (\d+)\.?$")
# 0.3: the step folder's path (torchtitan names its folders step-<N>).
_LOADING_FROM = re.compile(r"Loading the checkpoint from (\S*?/step-(\d+))/?\.?$")


@dataclass
class State:
    folder: str | None = None
    last_step: int = 0


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _STEP.search(line)
    if match:
        step = int(match.group(1))
        state.last_step = step
        fields = {"step": step, "loss": number(match.group(2)),
                  "tokens_per_s": number(match.group(4)), "recognizer": RECOGNIZER}
        for name, group in (("grad_norm", 3), ("tflops", 5), ("mfu_percent", 6)):
            if match.group(group) is not None:
                fields[name] = number(match.group(group))
        return Recognized(contract_events.STEP, fields)
    match = _VALIDATE.search(line)
    if match:
        return Recognized(contract_events.EVAL, {
            "step": int(match.group(1)), "metrics": {"loss": number(match.group(2))},
            "recognizer": RECOGNIZER})
    match = _FOLDER.search(line)
    if match:
        state.folder = match.group(1).rstrip("/")
        return None
    match = _SAVED.search(line)
    if match:
        if state.folder is None:
            return None
        return Recognized(contract_events.CHECKPOINT_SAVED, {
            "step": state.last_step, "path": f"{state.folder}/step-{state.last_step}",
            "seconds": number(match.group(1)), "recognizer": RECOGNIZER})
    match = _LOADING_FROM.search(line)
    if match:
        state.last_step = int(match.group(2))
        return Recognized(contract_events.RESUMED, {
            "step": state.last_step, "path": match.group(1), "recognizer": RECOGNIZER})
    match = _LOADING.search(line)
    if match:
        step = int(match.group(1))
        state.last_step = step
        fields = {"step": step, "recognizer": RECOGNIZER}
        if state.folder is not None:
            fields["path"] = f"{state.folder}/step-{step}"
        return Recognized(contract_events.RESUMED, fields)
    return None
