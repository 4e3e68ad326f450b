"""The PyTorch trainer (trainers/torch/trainer.py) on an XLA device, one process per host.

Everything is the PyTorch trainer's but where the processes meet: under SPMD a host is one
process driving all its devices, and the compiled program already averages the loss over the
whole global batch on every host, so a step has no loss all-reduce to wait for. The hosts'
Python meets in a gloo group (trainers/xla/hosts.py): after every step for the stop flags, so
all hosts stop after the same step and write the emergency checkpoint together, and in the
checkpoint manager's protocol (rank 0 prepares and commits, every host writes its part).

Per-host step times (straggler detection) are the PyTorch trainer's per-rank times with a
host as the rank: its own time from the step's start to the end of its forward (the batch and
the forward's tracing; XLA compiles and runs the step after that, in torch_xla.sync), each
host's mean over the last rank_times_every steps. They travel in the hosts' gather of stop flags
on those steps only (one slot per host: a few numbers more in a reduction the step makes
anyway), and host 0's step event prints them. One host reports none, as one process does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch_xla
import torch_xla.debug.metrics as xla_metrics

from trainers.job import preemption
from trainers.job.cluster import Process
from trainers.loop import Dispatched, StepRead
from trainers.torch.config import TrainConfig
from trainers.torch.trainer import Trainer
from trainers.xla import hosts
from trainers.xla import mesh as meshes
from trainers.xla.strategy import SpmdStrategy


class XlaTrainer(Trainer):
    def __init__(self, config: TrainConfig, shape: meshes.MeshShape, process: Process,
                 stop: preemption.StopRequest) -> None:
        device = str(torch_xla.device())
        self.shape = shape
        self.newest: _HostStep | None = None  # the step whose stop flags are gathered next
        super().__init__(config, process, device, stop,
                         strategy=SpmdStrategy(config, process, device, shape))

    def _stats_group(self) -> Any:
        return None  # the loss needs no reduction; the stop flags use the hosts' group

    def _reduce(self, loss: torch.Tensor, flags: list[float], slots: list[float]) -> Any:
        # The SPMD program's loss is the mean over the global batch already, on every host;
        # this host's time slots go with the step's stop flags (agreed_stop, right after).
        self.newest = _HostStep(loss, slots)
        return self.newest

    def compile_seconds(self) -> float:
        """XLA's graph compiles so far (the first steps' programs, and any recompile), by
        torch_xla's own CompileTime metric (nanoseconds): the loop's `compile` phase."""
        data = xla_metrics.metric_data("CompileTime")
        return data[1] / 1e9 if data else 0.0

    def read(self, done: Dispatched) -> StepRead:
        assert done.seconds is not None
        handle: _HostStep = done.handle
        return StepRead(float(handle.loss.item()), done.seconds, rank_times=handle.rank_times)

    def agreed_stop(self) -> Any:
        """The signal every host stops for after this step (SIGTERM may reach one VM only),
        and on a report step every host's own time in it (module docstring)."""
        newest, self.newest = self.newest, None
        slots = newest.slots if newest else []
        flags = self.stop.flags()
        summed = hosts.summed_flags([*flags, *slots], self.process)
        if newest and slots:
            newest.rank_times = tuple(summed[len(flags):])
        return preemption.agreed_signal(summed[:len(flags)])

    @torch.no_grad()
    def validation_loss(self) -> float:
        config, strategy = self.config, self.strategy
        self.model.eval()
        total = 0.0
        for i in range(config.eval_batches):
            x, y = self.eval_batch(i)
            total += float(strategy.eval_loss(self.model, x, y).item())
        self.model.train()
        return total / max(1, config.eval_batches)

    def checkpoint_metadata(self, loss: float | None) -> dict[str, Any]:
        return {**super().checkpoint_metadata(loss), "world_size": self.shape.devices}


@dataclass
class _HostStep:
    """A dispatched step: its loss on the device, this host's time slots (empty but on a report
    step) and, once the step's stop flags are gathered, every host's time."""

    loss: torch.Tensor
    slots: list[float]
    rank_times: tuple[float, ...] | None = None
