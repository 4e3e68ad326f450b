"""An Accelerate tracker that prints the control plane's events (vcp_callbacks).

    from vcp_callbacks.accelerate_tracker import ControlPlaneTracker
    tracker = ControlPlaneTracker(total_steps=1000)
    accelerator = tracker.follow(Accelerator(log_with=[tracker]))
    accelerator.log({"loss": loss.item(), "lr": scheduler.get_last_lr()[0]}, step=step)

Accelerate calls a tracker on the main process only: each `accelerator.log` with a `loss`
prints a step event (the step given, the total given to the tracker, the loss, `lr` or
`learning_rate`, the main process's mean step time and, every `rank_times_every` optimizer
steps, each rank's), one with `eval_*` or `val_*` keys an eval event; `finish`
(accelerator.end_training()) prints the end.

Each rank's step time is the time between its optimizer's steps (a hook torch calls after each
optimizer step, on every process, which a tracker alone never runs on), gathered across the
ranks every `rank_times_every` steps.

`follow(accelerator)` reports the checkpoints `accelerator.save_state` writes and the resumes
`load_state` makes (Accelerate calls no tracker then; without it the control plane reads the
loop's own steps from this tracker, and Accelerate's own checkpoint lines would be left as
lines). A checkpoint is reported once written: at the next optimizer step, log or the end.
Its step is its folder's `step_<N>` where the loop names it so (as Accelerate's examples do),
else the last step logged.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from accelerate.tracking import GeneralTracker
from torch.optim.optimizer import register_optimizer_step_post_hook

from vcp_callbacks.events import REPORTER, emit
from vcp_callbacks.ranks import RankTimes, number

EVAL_PREFIXES = ("eval_", "val_")
_STEP_FOLDER = re.compile(r"(?:^|/)step_(\d+)/?$")


class ControlPlaneTracker(GeneralTracker):  # type: ignore[misc]
    name = "vcp"
    requires_logging_directory = False
    main_process_only = True

    def __init__(self, total_steps: int = 0, rank_times_every: int = 10) -> None:
        super().__init__()
        self.total_steps = total_steps
        # The launcher's (torchrun, accelerate launch) environment: every process makes its
        # own tracker, and Accelerate has not started when it is made.
        self.rank = int(os.environ.get("RANK", "0"))
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self._times = RankTimes(rank_times_every)
        self._optimizer: int | None = None    # id of the optimizer whose steps are timed
        self._steps = 0
        self._stepped_at: float | None = None
        self._last = time.monotonic()
        self._step = 0
        self._loss: float | None = None
        self._saving: list[str] = []           # save_state folders not yet reported
        self._started = time.monotonic()
        self._hook = register_optimizer_step_post_hook(self._stepped)
        emit("run_started", f"rank {self.rank} of {self.world_size} started", rank=self.rank,
             world_size=self.world_size, strategy="accelerate", reporter=REPORTER)

    @property
    def tracker(self) -> Any:
        return None

    def store_init_configuration(self, values: dict[str, Any]) -> None:
        return None

    def follow(self, accelerator: Any) -> Any:
        """Report `accelerator`'s save_state checkpoints and load_state resumes; the
        accelerator, to be kept where it is made."""
        accelerator.register_save_state_pre_hook(self._before_save)
        accelerator.register_load_state_pre_hook(self._before_load)
        return accelerator

    def _stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        # A wrapped optimizer (Accelerate's) may step an inner one: only the first one seen
        # counts, once per step.
        if self._optimizer is None:
            self._optimizer = id(optimizer)
        if id(optimizer) != self._optimizer:
            return
        now = time.perf_counter()
        self._steps += 1
        if self._stepped_at is not None:  # the first step's time is setup's as much as its own
            self._times.stepped(self._steps, now - self._stepped_at, self.world_size)
        self._stepped_at = now
        if self._saving:
            self._report_saved()

    def _before_save(self, models: Any, weights: Any, output_dir: str) -> None:
        if self.rank == 0:
            self._saving.append(str(output_dir))

    def _before_load(self, models: Any, input_dir: str) -> None:
        step = _step_of(str(input_dir))
        if self.rank == 0 and step is not None:
            self._step = step
            emit("resumed", f"resumed at step {step}", step=step, path=str(input_dir))

    def _report_saved(self) -> None:
        for folder in self._saving:
            step = _step_of(folder)
            emit("checkpoint_saved", f"checkpoint {folder}",
                 step=self._step if step is None else step, path=folder)
        self._saving = []

    def log(self, values: dict[str, Any], step: int | None = None, **_: Any) -> None:
        if step is None:
            raise ValueError("give accelerator.log a step: the control plane charts by step")
        self._report_saved()
        now = time.monotonic()
        if "loss" in values:
            steps = max(step - self._step, 1)
            fields: dict[str, Any] = {"step": int(step), "loss": number(values["loss"]),
                                      "total_steps": self.total_steps}
            lr = values.get("lr", values.get("learning_rate"))
            if lr is not None:
                fields["lr"] = number(lr)
            if self._optimizer is None:  # no torch optimizer seen: the time between logs
                fields["step_time_s"] = (now - self._last) / steps
            # The optimizer's own (none for the first step, whose time is the setup's too).
            fields.update(self._times.taken())
            self._last, self._step, self._loss = now, int(step), fields["loss"]
            emit("step", f"step {step}/{self.total_steps}", **fields)
        metrics = {k.split("_", 1)[1]: number(v) for k, v in values.items()
                   if k.startswith(EVAL_PREFIXES)}
        if metrics:
            emit("eval", f"eval at step {step}", step=int(step), metrics=metrics)

    def finish(self) -> None:
        self._report_saved()
        self._hook.remove()
        emit("run_finished", f"finished at step {self._step}", step=self._step,
             final_loss=self._loss, wall_s=time.monotonic() - self._started)


def _step_of(folder: str) -> int | None:
    named = _STEP_FOLDER.search(folder)
    return int(named.group(1)) if named else None
