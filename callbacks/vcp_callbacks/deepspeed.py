"""The control plane's events from a DeepSpeed engine's loop (vcp_callbacks).

    from vcp_callbacks.deepspeed import follow
    engine, optimizer, _, _ = deepspeed.initialize(model=model, config=config, ...)
    reporter = follow(engine, total_steps=1000)      # then the loop as it is

DeepSpeed has no callbacks: `follow` wraps the engine's own methods on this one engine (its
class is left alone), on every process. Each optimizer step (`engine.step` at a
gradient-accumulation boundary, where the engine's global step advances) times this rank's
step, from the step's first training forward (or backward) to its end; every
`rank_times_every` steps the ranks' times are gathered (a collective every rank reaches at the
same global step). Rank 0 prints a step event every `every` steps (the engine's
`steps_per_print` unless given): the engine's exact global step, the total given, the mean of
the losses given to `engine.backward` since the last step (rank 0's), the first parameter
group's learning rate, its own and every rank's step times. `save_checkpoint` reports the
checkpoint once written (its folder `<save_dir>/<tag>`, `global_step<N>` by default, what
`load_checkpoint` and a resubmission take), `load_checkpoint` the resume; the run's end by
`reporter.finish()`, or when the process exits once the global step reached `total_steps`.
`reporter.eval({"loss": ...})` reports an evaluation at the current step.
"""

from __future__ import annotations

import atexit
import os
import time
from typing import Any

import torch

from vcp_callbacks.events import REPORTER, emit
from vcp_callbacks.ranks import RankTimes, number


def follow(engine: Any, total_steps: int = 0, every: int | None = None,
           rank_times_every: int = 10) -> Reporter:
    """Report `engine`'s steps, checkpoints and resumes; the reporter (for eval and finish)."""
    return Reporter(engine, total_steps, every, rank_times_every)


class Reporter:
    def __init__(self, engine: Any, total_steps: int, every: int | None,
                 rank_times_every: int) -> None:
        self.engine = engine
        self.total_steps = total_steps
        self.every = every or int(engine.steps_per_print() or 10)
        if self.every < 1:
            raise ValueError("every must be 1 or more")
        self.rank, self.world_size = int(engine.global_rank), int(engine.world_size)
        self._times = RankTimes(rank_times_every)
        self._began: float | None = None
        self._losses: list[torch.Tensor] = []
        self._last_loss: float | None = None
        self._finished = False
        self._started = time.monotonic()
        self._wrap("forward", self._forward)
        self._wrap("backward", self._backward)
        self._wrap("step", self._step)
        self._wrap("save_checkpoint", self._save_checkpoint)
        self._wrap("load_checkpoint", self._load_checkpoint)
        if self.rank == 0:
            atexit.register(self._at_exit)
        params = sum(p.numel() for p in engine.module.parameters())
        emit("run_started", f"rank {self.rank} of {self.world_size} started", rank=self.rank,
             world_size=self.world_size, strategy="deepspeed", reporter=REPORTER,
             params=int(params), resumed_from_step=int(engine.global_steps) or None)

    def _wrap(self, name: str, wrapper: Any) -> None:
        original = getattr(self.engine, name)
        # On the instance only (a torch Module keeps a plain function as an attribute): the
        # class, and any other engine, are untouched.
        object.__setattr__(self.engine, name,
                           lambda *args, **kwargs: wrapper(original, *args, **kwargs))

    def _forward(self, original: Any, *args: Any, **kwargs: Any) -> Any:
        if self._began is None and torch.is_grad_enabled():  # an evaluation's is no step's
            self._began = time.perf_counter()
        return original(*args, **kwargs)

    def _backward(self, original: Any, loss: Any, *args: Any, **kwargs: Any) -> Any:
        if self._began is None:
            self._began = time.perf_counter()
        if self.rank == 0 and isinstance(loss, torch.Tensor):
            self._losses.append(loss.detach())
        return original(loss, *args, **kwargs)

    def _step(self, original: Any, *args: Any, **kwargs: Any) -> Any:
        before = self.engine.global_steps
        result = original(*args, **kwargs)
        step = int(self.engine.global_steps)
        if step == before:  # a micro-step inside gradient accumulation
            return result
        now = time.perf_counter()
        self._times.stepped(step, now - (self._began or now), self.world_size)
        self._began = None
        if self.rank == 0:
            if self._losses:
                self._last_loss = number(torch.stack(self._losses).float().mean())
                self._losses = []
            if step % self.every == 0 or step == self.total_steps:
                self._report_step(step)
        return result

    def _report_step(self, step: int) -> None:
        lrs = self.engine.get_lr()
        fields: dict[str, Any] = {"step": step, "total_steps": self.total_steps,
                                  "loss": self._last_loss,
                                  "lr": number(lrs[0]) if lrs else None,
                                  **self._times.taken()}
        emit("step", f"step {step}/{self.total_steps}", **fields)

    def _save_checkpoint(self, original: Any, save_dir: str, tag: Any = None,
                         *args: Any, **kwargs: Any) -> Any:
        result = original(save_dir, tag, *args, **kwargs)
        step = int(self.engine.global_steps)
        if self.rank == 0:
            folder = os.path.join(str(save_dir), str(tag) if tag is not None
                                  else f"global_step{step}")
            emit("checkpoint_saved", f"checkpoint {folder}", step=step, path=folder)
        return result

    def _load_checkpoint(self, original: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        load_path = result[0] if isinstance(result, tuple) and result else None
        if self.rank == 0 and load_path:
            # The model states file's folder: the tag folder the checkpoint was saved as.
            emit("resumed", f"resumed at step {self.engine.global_steps}",
                 step=int(self.engine.global_steps), path=os.path.dirname(str(load_path)))
        return result

    def eval(self, metrics: dict[str, Any]) -> None:
        """An evaluation at the engine's current global step (printed by rank 0)."""
        if self.rank == 0:
            step = int(self.engine.global_steps)
            emit("eval", f"eval at step {step}", step=step,
                 metrics={k: number(v) for k, v in metrics.items()})

    def _at_exit(self) -> None:
        # After the loop's last evaluation and checkpoint; only a run that reached its total
        # (an exception's exit is no end).
        if self.total_steps and self.engine.global_steps >= self.total_steps:
            self.finish()

    def finish(self) -> None:
        """The run's end (once; printed by rank 0)."""
        if self.rank != 0 or self._finished:
            return
        self._finished = True
        emit("run_finished", f"finished at step {self.engine.global_steps}",
             step=int(self.engine.global_steps), final_loss=self._last_loss,
             wall_s=time.monotonic() - self._started)
