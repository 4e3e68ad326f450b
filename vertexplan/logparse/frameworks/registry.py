"""Which recognizers read a job's lines, and the cheap test that spares the rest.

A caller keeps one JobState per job task (a replica's lines, in order): the recognizers'
per-job counts live there. A line goes to the recognizers of the job's framework (all of
them when none is known) only when it holds one of their markers: most of a log is lines
no framework prints, and those cost one substring search each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from vertexplan.logparse.frameworks import (
    accelerate,
    deepspeed,
    hf_trainer,
    lightning,
    maxtext,
    torchrun,
    torchtitan,
)
from vertexplan.logparse.frameworks.common import MAX_LINE, Recognized, clean, last_state

BUILTIN = "builtin"
RECOGNIZERS: dict[str, ModuleType] = {
    module.NAME: module for module in (hf_trainer, torchtitan, lightning, deepspeed, torchrun,
                                       maxtext, accelerate)
}
# What a detected framework's lines may hold: Accelerate and the DeepSpeed launcher mostly
# run HF Trainer scripts, and anything launched with torchrun may see it restart.
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "hf_trainer": ("hf_trainer", "torchrun"),
    "accelerate": ("hf_trainer", "accelerate", "deepspeed", "torchrun"),
    "deepspeed": ("deepspeed", "hf_trainer", "torchrun"),
    "torchtitan": ("torchtitan", "torchrun"),
    "lightning": ("lightning", "torchrun"),
    "torchrun": ("torchrun", "hf_trainer", "deepspeed", "lightning"),
    "maxtext": ("maxtext",),
    # The product's own trainers (trainers/): their events are JSON, read as the contract's;
    # no recognizer reads their text, so no print of theirs can look like a framework's.
    BUILTIN: (),
}
ALL = tuple(RECOGNIZERS)
# The recognizers that read a team's own loop's bar and evaluations (loop_bar.py).
LOOPS = frozenset({accelerate.NAME, deepspeed.NAME})


def _markers(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({m for name in names for m in RECOGNIZERS[name].MARKERS}))


_PREFILTERS = {key: _markers(names) for key, names in {**FRAMEWORKS, None: ALL}.items()}


def may_be_framework_line(text: str, framework: str | None = None) -> bool:
    """False for a line none of the framework's recognizers could read (the fast path: a
    few substring tests, under a microsecond for a usual line; a loop of `in` beat one
    regular expression of the same alternatives)."""
    if len(text) > MAX_LINE:
        text = last_state(text)
        if len(text) > MAX_LINE:
            return False
    for marker in _PREFILTERS.get(framework, _PREFILTERS[None]):  # noqa: SIM110 -- faster
        if marker in text:
            return True
    return False


@dataclass
class JobState:
    """The recognizers' state for one task's lines; framework None: try every recognizer."""

    framework: str | None = None
    states: dict[str, Any] = field(default_factory=dict)

    def of(self, name: str) -> Any:
        if name not in self.states:
            self.states[name] = RECOGNIZERS[name].new_state()
        state = self.states[name]
        if name in LOOPS:
            # A loop's bar is read only where the job is known to run that framework: in a
            # job of another or none, a bar is another program's (loop_bar.py).
            state.loop = self.framework == name
        return state


def recognize(text: str, job: JobState) -> Recognized | None:
    """The event a framework's line means, or None (the line stays a plain log line)."""
    if not may_be_framework_line(text, job.framework):
        return None
    line = clean(text)
    if not line:
        return None
    names = FRAMEWORKS.get(job.framework, ALL) if job.framework else ALL
    for name in names:
        found = RECOGNIZERS[name].recognize(line, job.of(name))
        if found is not None:
            return found
    return None


def restep(job: JobState, counted: object) -> tuple[int, bool] | None:
    """Where a step line a recognizer counted (its `counted` field) lies now, and whether
    exactly: only the HF Trainer's steps are counted, not printed."""
    if hf_trainer.NAME not in job.states:
        return None
    return hf_trainer.restep(job.of(hf_trainer.NAME), counted)
