"""The PyTorch trainer (trainers/torch/trainer.py) on an XLA device, one process per host.

Everything is the PyTorch trainer's but where the processes meet: under SPMD a host is one
process driving all its devices, with no torch.distributed process group between hosts. The
compiled program already averages the loss over the whole batch, so a step has no all-reduce
to wait for, and each host stops on its own signal. Host 0 owns the checkpoint folder (every
host holds the whole state on the mesh); the others take part in gathering it off the devices
and wait at a rendezvous.
"""

from __future__ import annotations

import tempfile
from typing import Any

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from trainers.checkpoint import CheckpointInfo, latest, step_folder_name
from trainers.job import preemption
from trainers.job.cluster import Process
from trainers.loop import Dispatched, StepRead
from trainers.storage import LocalStorage
from trainers.torch.checkpoints import CheckpointManager, WriteFn
from trainers.torch.config import TrainConfig
from trainers.torch.trainer import Trainer
from trainers.xla import mesh as meshes
from trainers.xla.strategy import SpmdStrategy


def host_process() -> Process:
    """This host as the trainer's process: a rank per host, not per device."""
    return Process(xr.process_index(), xr.process_count(), 0, 1, "", 0, "xla")


class XlaTrainer(Trainer):
    def __init__(self, config: TrainConfig, shape: meshes.MeshShape,
                 stop: preemption.StopRequest) -> None:
        process = host_process()
        device = str(torch_xla.device())
        self.shape = shape
        super().__init__(config, process, device, stop,
                         strategy=SpmdStrategy(config, process, device, shape))

    def _stats_group(self) -> Any:
        return None  # no process group: see `_reduce`

    def _checkpoint_manager(self) -> HostZeroCheckpoints:
        assert self.config.checkpoint_dir
        return HostZeroCheckpoints(self.config.checkpoint_dir, self.config.keep, self.process)

    def _reduce(self, loss: torch.Tensor, flags: list[float]) -> Any:
        # The SPMD program's loss is the mean over the global batch already, on every host.
        return loss, flags

    def read(self, done: Dispatched) -> StepRead:
        loss, flags = done.handle
        assert done.seconds is not None
        return StepRead(float(loss.item()), done.seconds, preemption.agreed_signal(flags[:-1]))

    def agreed_stop(self) -> Any:
        """This host's signal, right after the step that saw it."""
        return self.stop.received

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


class HostZeroCheckpoints:
    """The run's checkpoint folder, owned by host 0. Every host calls every method."""

    def __init__(self, root: str, keep: int, process: Process) -> None:
        # Host 0 reads and writes the folder; the others only read what it chose.
        self.manager = CheckpointManager(root, keep, rank=0, world_size=1)
        self.root, self.storage = self.manager.root, self.manager.storage
        self.process = process

    def prepare(self) -> tuple[CheckpointInfo | None, list[str]]:
        found, removed = self.manager.prepare() if self.process.is_main else (None, [])
        if self.process.world_size > 1:
            xm.rendezvous("checkpoints-prepared")  # host 0 has removed the leftovers
            if not self.process.is_main:
                found = latest(self.storage, self.root)
        return found, removed

    def save(self, step: int, write: WriteFn, metadata: dict[str, Any]) -> CheckpointInfo:
        if self.process.is_main:
            info = self.manager.save(step, write, metadata)
        else:
            # Gathering the state off the devices takes every host; what the others would
            # write (their RNG) is dropped with the scratch folder.
            with tempfile.TemporaryDirectory(prefix="xla-checkpoint-") as scratch:
                write(LocalStorage(), scratch)
            info = CheckpointInfo(step, self.storage.join(self.root, step_folder_name(step)), {})
        if self.process.world_size > 1:
            xm.rendezvous(f"checkpoint-{step}")  # no host runs ahead of an unwritten save
        return info
