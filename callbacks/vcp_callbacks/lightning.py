"""A PyTorch Lightning `Callback` that prints the control plane's events (vcp_callbacks).

Every process prints its `run_started`; global rank 0 prints the steps (every
`log_every_n_steps`, as Lightning logs: the exact global step and the max_steps total, the
loss the module logs as `loss` or `train_loss`, the optimizer's learning rate), the
validation metrics, each checkpoint ModelCheckpoint saves and the end. Each rank's own step
time is gathered every `rank_times_every` steps when the run has several processes.
"""

from __future__ import annotations

import time
from typing import Any

from lightning.pytorch.callbacks import Callback

from vcp_callbacks.events import REPORTER, emit
from vcp_callbacks.ranks import RankTimes, number

LOSS_KEYS = ("loss", "train_loss")


class ControlPlaneCallback(Callback):  # type: ignore[misc]
    def __init__(self, rank_times_every: int = 10) -> None:
        self.rank_times_every = rank_times_every
        self._times = RankTimes(rank_times_every)  # refuses an `every` under 1
        self._began = 0.0
        self._started = 0.0
        self._saved: set[str] = set()

    def on_train_start(self, trainer: Any, module: Any) -> None:
        self._started = time.monotonic()
        emit("run_started", f"rank {trainer.global_rank} of {trainer.world_size} started",
             rank=int(trainer.global_rank), world_size=int(trainer.world_size),
             strategy="lightning", reporter=REPORTER,
             params=int(sum(p.numel() for p in module.parameters())),
             resumed_from_step=int(trainer.global_step) or None)

    def on_train_batch_start(self, trainer: Any, module: Any, batch: Any, index: int) -> None:
        self._began = time.perf_counter()

    def on_train_batch_end(self, trainer: Any, module: Any, outputs: Any, batch: Any,
                           index: int) -> None:
        step = int(trainer.global_step)
        self._times.stepped(step, time.perf_counter() - self._began, int(trainer.world_size))
        if trainer.global_rank != 0 or step % max(trainer.log_every_n_steps, 1) != 0:
            return
        metrics = trainer.callback_metrics
        loss = next((number(metrics[k]) for k in LOSS_KEYS if k in metrics), None)
        fields: dict[str, Any] = {"step": step, "loss": loss,
                                  "total_steps": max(int(trainer.max_steps), 0)}
        optimizers = trainer.optimizers
        if optimizers:
            fields["lr"] = number(optimizers[0].param_groups[0].get("lr"))
        fields.update(self._times.taken())
        emit("step", f"step {step}/{fields['total_steps']}", **fields)
        self._report_checkpoints(trainer)

    def on_validation_end(self, trainer: Any, module: Any) -> None:
        if trainer.global_rank != 0 or trainer.sanity_checking:
            return
        metrics = {k[len("val_"):] if k.startswith("val_") else k: number(v)
                   for k, v in trainer.callback_metrics.items() if k.startswith("val")}
        if metrics:
            emit("eval", f"eval at step {trainer.global_step}", step=int(trainer.global_step),
                 metrics=metrics)

    def on_train_end(self, trainer: Any, module: Any) -> None:
        if trainer.global_rank != 0:
            return
        self._report_checkpoints(trainer)
        loss = next((number(trainer.callback_metrics[k]) for k in LOSS_KEYS
                     if k in trainer.callback_metrics), None)
        emit("run_finished", f"finished at step {trainer.global_step}",
             step=int(trainer.global_step), final_loss=loss,
             wall_s=time.monotonic() - self._started)

    def _report_checkpoints(self, trainer: Any) -> None:
        """Each file a ModelCheckpoint has saved since the last report, once (Lightning
        calls no hook with the path)."""
        for callback in trainer.checkpoint_callbacks:
            path = getattr(callback, "last_model_path", "") or ""
            best = getattr(callback, "best_k_models", {}) or {}
            for saved in [*best, path]:
                if saved and saved not in self._saved:
                    self._saved.add(saved)
                    emit("checkpoint_saved", f"checkpoint {saved}",
                         step=_step_of(saved, int(trainer.global_step)), path=saved)


def _step_of(path: str, default: int) -> int:
    name = path.rsplit("/", 1)[-1]
    for part in name.replace(".ckpt", "").split("-"):
        if part.startswith("step=") and part[5:].isascii() and part[5:].isdigit():
            return int(part[5:])
    return default
