"""The interface the trainer talks to: how the model is wrapped and stepped, and what each rank
saves and loads. One subclass per family: DDP (`ddp.py`), FSDP2 (`fsdp.py`), DeepSpeed ZeRO
(`zero.py`), tensor x pipeline x data parallel (`tensor_pipeline.py`), and SPMD on an XLA device
(trainers/xla/strategy.py).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from concurrent.futures import Future
from typing import Any

import torch
from torch import nn

from trainers.job.cluster import Process
from trainers.storage import Storage
from trainers.torch.config import TrainConfig
from trainers.torch.optim import build_optimizer
from trainers.torch.parallel import resolve_dims


class Strategy(ABC):
    # What `save` writes. A checkpoint is resumed only by a strategy that writes the same format.
    checkpoint_format: str
    every_rank_writes: bool  # False: the state is replicated and rank 0 alone writes it
    supports_async_save = False

    def __init__(self, config: TrainConfig, process: Process, device: str) -> None:
        self.config = config
        self.name = config.strategy
        self.process = process
        self.device = device

    def setup(self, model: nn.Module) -> tuple[nn.Module, torch.optim.Optimizer]:
        """The model the training step runs and the optimizer whose learning rate the trainer
        sets every step. `model` is already on the device, or on the meta device until the
        strategy materialises it (trainers/torch/models.materialise)."""
        wrapped = self.wrap(model)
        return wrapped, build_optimizer(wrapped, self.config)

    def build_context(self) -> contextlib.AbstractContextManager | None:
        """Where a Hugging Face model is built: None = on the meta device, given this rank's
        weights once the strategy has split it (trainers/torch/models)."""
        return None

    def wrap(self, model: nn.Module) -> nn.Module:
        raise NotImplementedError(f"{type(self).__name__} overrides setup() instead")

    def autocast(self) -> contextlib.AbstractContextManager:
        """The forward pass's precision context."""
        if self.config.precision != "bf16":
            return contextlib.nullcontext()
        return torch.autocast(torch.device(self.device).type, dtype=torch.bfloat16)

    def to_device(self, batch: torch.Tensor) -> torch.Tensor:
        """A batch (on the CPU) where `forward_backward` and `eval_loss` take it: the device.
        A strategy that places it on its devices itself takes it as it is."""
        return batch.to(self.device)

    def dims_event(self) -> dict[str, int]:
        """The parallel degrees, as `run_started` and checkpoint metadata report them."""
        dims = resolve_dims(self.config.dp, self.config.tp, self.config.pp, self.process.world_size)
        return {"dp": dims.dp, "tp": dims.tp, "pp": dims.pp}

    def started_shape(self) -> dict[str, Any]:
        """run_started's fields about how the model is laid out, beyond the degrees."""
        return {}

    def data_shard(self) -> tuple[int, int]:
        """(index, count): which share of every global batch this rank trains on. Ranks that
        split one model between them (tensor, pipeline parallel) share one."""
        return self.process.rank, self.process.world_size

    def forward_backward(
        self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor
    ) -> torch.Tensor:
        """Forward and backward over this rank's batch in micro-steps of micro_batch_size
        sequences; returns the mean loss (a float64 scalar). The trainer averages it over all
        ranks: a strategy whose ranks do not all compute the loss weighs it accordingly."""
        micro = self.config.micro_batch_size or len(x)
        accumulation = len(x) // micro
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for i in range(accumulation):
            rows = slice(i * micro, (i + 1) * micro)
            last = i == accumulation - 1
            # Gradients are averaged across ranks only on the last micro-step.
            with contextlib.nullcontext() if last else self.accumulating(wrapped):
                with self.autocast():
                    _, loss = wrapped(x[rows], y[rows])
                self.backward(wrapped, loss, accumulation)
            total += loss.detach().double()
        return total / accumulation

    def eval_loss(self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The loss of one evaluation batch (no gradients), weighed as `forward_backward`'s."""
        with self.autocast():
            _, loss = wrapped(x, y)
        return loss.double()

    def accumulating(self, wrapped: nn.Module) -> contextlib.AbstractContextManager:
        """Around a micro-step that is not the last of its optimizer step: gradients are not
        synchronised across ranks yet."""
        return contextlib.nullcontext()

    def backward(self, wrapped: nn.Module, loss: torch.Tensor, accumulation: int) -> None:
        (loss / accumulation).backward()

    def optimizer_step(self, wrapped: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        """Clip, step and clear the gradients once the last micro-step's backward has run."""
        if self.config.grad_clip:
            torch.nn.utils.clip_grad_norm_(wrapped.parameters(), self.config.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    @abstractmethod
    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        """Write model and optimizer state into `folder`; called on every rank."""

    def save_async(
        self, storage: Storage, folder: str, wrapped: nn.Module, optimizer
    ) -> Future[None]:
        """Like `save`, but returns once the state is copied: the write goes on in the
        background and the future completes when it is durable. Called on every rank."""
        raise NotImplementedError(f"{self.name} writes checkpoints synchronously")

    @abstractmethod
    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        """Restore what `save` wrote; called on every rank."""

    @abstractmethod
    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        """Complete CPU weights for export on rank 0 (None on other ranks). Called on every
        rank: sharded strategies gather."""

    def check_resumable(self, metadata: dict[str, Any], path: str) -> None:
        """Refuse, with a message, a checkpoint this strategy cannot load."""
        # Checkpoints from before formats were recorded were all written by DDP.
        found = metadata.get("format", "torch")
        if found != self.checkpoint_format:
            raise ValueError(
                f"checkpoint {path} was written by strategy {metadata.get('strategy')!r} "
                f"({found} format); {self.name} reads {self.checkpoint_format} checkpoints: "
                "resume with the same strategy family or use another checkpoint directory"
            )
