"""A `transformers.TrainerCallback` that prints the control plane's events (vcp_callbacks).

Every process prints its `run_started`; the first process of the run (the world's rank 0)
prints the steps, evaluations, checkpoints and the end, as Trainer logs only there. Each
rank's own step time (from step begin to step end, its waits for the others included only as
Trainer's step makes them) is gathered every `rank_times_every` steps when torch.distributed
runs, and sent with the next step event: the control plane names a persistently slower rank.
"""

from __future__ import annotations

import os
import time
from typing import Any

from transformers import TrainerCallback

from vcp_callbacks.events import REPORTER, emit
from vcp_callbacks.ranks import RankTimes, number


class ControlPlaneCallback(TrainerCallback):  # type: ignore[misc]
    def __init__(self, rank_times_every: int = 10) -> None:
        self.rank_times_every = rank_times_every
        self._times = RankTimes(rank_times_every)  # refuses an `every` under 1
        self._began = 0.0
        self._started = 0.0

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **_: Any) -> None:
        self._started = time.monotonic()
        params = sum(p.numel() for p in model.parameters()) if model is not None else None
        fields: dict[str, Any] = {"rank": int(args.process_index),
                                  "world_size": int(args.world_size),
                                  "strategy": "hf_trainer", "reporter": REPORTER,
                                  "resumed_from_step": state.global_step or None}
        if params is not None:
            fields["params"] = int(params)
        emit("run_started", f"rank {args.process_index} of {args.world_size} started", **fields)

    def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        self._began = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        self._times.stepped(int(state.global_step), time.perf_counter() - self._began,
                            int(args.world_size))

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **_: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        step = int(state.global_step)
        if "loss" in logs:
            fields: dict[str, Any] = {"step": step, "total_steps": int(state.max_steps or 0),
                                      "loss": number(logs.get("loss")),
                                      "lr": number(logs.get("learning_rate"))}
            fields.update(self._times.taken())
            emit("step", f"step {step}/{fields['total_steps']}", **fields)
        metrics = {k[len("eval_"):]: number(v) for k, v in logs.items()
                   if k.startswith("eval_")}
        if metrics:
            emit("eval", f"eval at step {step}", step=step, metrics=metrics)

    def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if state.is_world_process_zero:
            step = int(state.global_step)
            path = os.path.join(args.output_dir, f"checkpoint-{step}")
            emit("checkpoint_saved", f"checkpoint at step {step}", step=step, path=path)

    def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if state.is_world_process_zero:
            losses = [h["loss"] for h in state.log_history if "loss" in h]
            emit("run_finished", f"finished at step {state.global_step}",
                 step=int(state.global_step),
                 final_loss=number(losses[-1]) if losses else None,
                 wall_s=time.monotonic() - self._started)
