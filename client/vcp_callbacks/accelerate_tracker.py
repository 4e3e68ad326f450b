"""An Accelerate tracker that prints the control plane's events (vcp_callbacks).

    from vcp_callbacks.accelerate_tracker import ControlPlaneTracker
    accelerator = Accelerator(log_with=[ControlPlaneTracker(total_steps=1000)])
    accelerator.log({"loss": loss.item(), "lr": scheduler.get_last_lr()[0]}, step=step)

Accelerate calls a tracker on the main process only: each `accelerator.log` with a `loss`
prints a step event (the step given, the total given to the tracker, the loss, `lr` or
`learning_rate`, and the time since the last one), one with `eval_*` or `val_*` keys an eval
event; `finish` (accelerator.end_training()) prints the end.
"""

from __future__ import annotations

import time
from typing import Any

from accelerate.tracking import GeneralTracker

from vcp_callbacks.events import REPORTER, emit
from vcp_callbacks.ranks import number

EVAL_PREFIXES = ("eval_", "val_")


class ControlPlaneTracker(GeneralTracker):  # type: ignore[misc]
    name = "vcp"
    requires_logging_directory = False
    main_process_only = True

    def __init__(self, total_steps: int = 0) -> None:
        super().__init__()
        self.total_steps = total_steps
        self._last = time.monotonic()
        self._since = 0
        self._step = 0
        self._loss: float | None = None
        self._started = time.monotonic()
        emit("run_started", "the main process started", rank=0, strategy="accelerate",
             reporter=REPORTER)

    @property
    def tracker(self) -> Any:
        return None

    def store_init_configuration(self, values: dict[str, Any]) -> None:
        return None

    def log(self, values: dict[str, Any], step: int | None = None, **_: Any) -> None:
        if step is None:
            raise ValueError("give accelerator.log a step: the control plane charts by step")
        now = time.monotonic()
        if "loss" in values:
            steps = max(step - self._step, 1)
            fields: dict[str, Any] = {"step": int(step), "loss": number(values["loss"]),
                                      "total_steps": self.total_steps,
                                      "step_time_s": (now - self._last) / steps}
            lr = values.get("lr", values.get("learning_rate"))
            if lr is not None:
                fields["lr"] = number(lr)
            self._last, self._step, self._loss = now, int(step), fields["loss"]
            emit("step", f"step {step}/{self.total_steps}", **fields)
        metrics = {k.split("_", 1)[1]: number(v) for k, v in values.items()
                   if k.startswith(EVAL_PREFIXES)}
        if metrics:
            emit("eval", f"eval at step {step}", step=int(step), metrics=metrics)

    def finish(self) -> None:
        emit("run_finished", f"finished at step {self._step}", step=self._step,
             final_loss=self._loss, wall_s=time.monotonic() - self._started)
