"""SPMD on an XLA device: the PyTorch trainer's strategy when it runs under torch_xla.

The arithmetic is the ddp strategy's: the same GPT built on the CPU from the seed (so the same
initial weights), the same batches, AdamW with the same groups, the same clipping. Only where
it runs differs: one SPMD program over the (data, fsdp) mesh (trainers/xla/mesh.py), compiled
by XLA, which inserts the collectives. So there is no gradient all-reduce to write, and every
host trains on the whole global batch, split over the devices by its sharding.

Checkpoints of a data-parallel mesh (fsdp 1) are the ddp strategy's `torch` format (model.pt,
optimizer.pt): the PyTorch trainer resumes them and this one resumes its. Host 0 writes them.
With fsdp above 1 the state is sharded, and every host writes its own shards with torch_xla's
distributed checkpointing (trainers/xla/sharded_checkpoint.py) instead of gathering it whole.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch_xla
from torch import nn

from trainers.job.cluster import Process
from trainers.storage import Storage
from trainers.torch.config import TrainConfig
from trainers.torch.models import transformer_blocks
from trainers.torch.strategies.base import Strategy
from trainers.torch.strategies.ddp import MODEL_FILE, OPTIMIZER_FILE, cpu_copy, read, write
from trainers.xla import mesh as meshes
from trainers.xla import sharded_checkpoint

STRATEGY = "xla"


class SpmdStrategy(Strategy):
    def __init__(self, config: TrainConfig, process: Process, device: str,
                 shape: meshes.MeshShape) -> None:
        super().__init__(config, process, device)
        self.shape = shape
        self.sharded = shape.fsdp > 1
        # "torch": the ddp strategy's files (trainers/torch/strategies/ddp.py).
        self.checkpoint_format = sharded_checkpoint.FORMAT if self.sharded else "torch"
        self.every_rank_writes = self.sharded
        self.mesh = meshes.build(shape)
        self.sharded_parameters = 0

    def wrap(self, model: nn.Module) -> nn.Module:
        # Moving to an XLA device makes new parameter objects module by module, which unties
        # the output head from the embedding: tie them again, or they would train apart.
        model.lm_head.weight = model.wte.weight
        if self.config.activation_checkpointing == "full":
            checkpoint_blocks(model)
        self.sharded_parameters = meshes.shard_parameters(model, self.mesh, self.shape)
        return model

    def dims_event(self) -> dict[str, int]:
        return self.shape.as_dict()

    def data_shard(self) -> tuple[int, int]:
        return 0, 1  # the whole global batch: the sharding splits it over the devices

    def to_device(self, batch: torch.Tensor) -> torch.Tensor:
        return batch  # placed and sharded micro-batch by micro-batch in `_loss`

    def forward_backward(
        self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor
    ) -> torch.Tensor:
        """The global batch in micro-steps of micro_batch_size sequences per device; returns
        the mean loss, on the device (read one step later)."""
        micro = self.config.micro_batch_size * self.shape.devices or len(x)
        accumulation = len(x) // micro
        total = None
        for i in range(accumulation):
            rows = slice(i * micro, (i + 1) * micro)
            loss = self._loss(wrapped, x[rows], y[rows])
            (loss / accumulation).backward()
            total = loss.detach() if total is None else total + loss.detach()
        assert total is not None
        return total / accumulation

    def eval_loss(self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self._loss(wrapped, x, y)

    def _loss(self, model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.to(self.device), y.to(self.device)
        meshes.shard_batch(x, self.mesh)
        meshes.shard_batch(y, self.mesh)
        if self.config.precision == "bf16":
            with torch.autocast("xla", dtype=torch.bfloat16):
                return model(x, y)[1]
        return model(x, y)[1]

    def optimizer_step(self, wrapped: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        super().optimizer_step(wrapped, optimizer)
        torch_xla.sync()  # the step's graph is cut here and runs as one compiled program

    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        if self.sharded:
            sharded_checkpoint.save(storage, folder, wrapped, optimizer)
            return
        model_state = cpu_copy(wrapped.state_dict())
        optimizer_state = cpu_copy(optimizer.state_dict())
        if self.process.is_main:
            write(storage, folder, model_state, optimizer_state)

    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        if self.sharded:
            sharded_checkpoint.load(storage, folder, wrapped, optimizer)
            return
        wrapped.load_state_dict(read(storage, storage.join(folder, MODEL_FILE), "cpu"))
        # Loaded weights are new device data: give them their sharding again.
        self.sharded_parameters = meshes.shard_parameters(wrapped, self.mesh, self.shape)
        optimizer.load_state_dict(read(storage, storage.join(folder, OPTIMIZER_FILE), "cpu"))

    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        weights = cpu_copy(wrapped.state_dict())  # every host gathers
        return weights if self.process.is_main else None

    def started_shape(self) -> dict[str, Any]:
        return {"devices": self.shape.devices, "sharded_parameters": self.sharded_parameters}


def checkpoint_blocks(model: nn.Module) -> None:
    """Full activation checkpointing: each block keeps only its input and runs its forward
    again in backward. torch_xla's checkpoint, not torch's: XLA sees forward and backward in
    one graph and would reuse the forward's activations instead of recomputing them (common
    subexpressions), which its version prevents with an optimization barrier. The forward is
    replaced in place, so parameter names stay the plain ones (checkpoints, exports)."""
    from torch_xla.utils.checkpoint import checkpoint

    for block in transformer_blocks(model):
        block.forward = _checkpointed(block.forward, checkpoint)


def _checkpointed(forward: Any, checkpoint: Any) -> Any:
    @functools.wraps(forward)
    def run(*args: Any, **kwargs: Any) -> Any:
        return checkpoint(forward, *args, **kwargs)

    return run
