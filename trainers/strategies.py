"""Parallelism strategies: how the model is wrapped, and what each rank saves and loads.

The trainer only talks to `Strategy`, so sharded strategies (FSDP, DeepSpeed ZeRO) slot in as
new subclasses: they wrap differently, write a shard on every rank (`every_rank_writes`), and
gather full weights for the exported model.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from trainers.cluster import Process
from trainers.storage import Storage

MODEL_FILE = "model.pt"
OPTIMIZER_FILE = "optimizer.pt"


class Strategy(ABC):
    name: str
    every_rank_writes: bool  # False: the state is replicated and rank 0 alone writes it

    def __init__(self, name: str, process: Process, device: str) -> None:
        self.name = name
        self.process = process
        self.device = device

    @abstractmethod
    def wrap(self, model: nn.Module) -> nn.Module:
        """The model the training step runs (after it was moved to the device)."""

    @abstractmethod
    def unwrap(self, wrapped: nn.Module) -> nn.Module:
        """The plain model inside (for evaluation)."""

    def no_sync(self, wrapped: nn.Module) -> contextlib.AbstractContextManager:
        """Skips gradient synchronisation during gradient accumulation micro-steps."""
        return contextlib.nullcontext()

    @abstractmethod
    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        """Write model and optimizer state into `folder`; called on every rank."""

    @abstractmethod
    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        """Restore what `save` wrote; called on every rank."""

    @abstractmethod
    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        """Complete CPU weights for export on rank 0 (None on other ranks)."""


class DataParallel(Strategy):
    """DDP: every rank holds the whole model; gradients are averaged by all-reduce. With world
    size 1 this is the single-process path (the same code, a one-member process group)."""

    every_rank_writes = False

    def wrap(self, model: nn.Module) -> nn.Module:
        device_ids = [torch.device(self.device).index] if self.device.startswith("cuda") else None
        return DistributedDataParallel(model, device_ids=device_ids)

    def unwrap(self, wrapped: nn.Module) -> nn.Module:
        return wrapped.module

    def no_sync(self, wrapped: nn.Module) -> contextlib.AbstractContextManager:
        return wrapped.no_sync()

    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        if self.process.rank != 0:
            return
        _save(storage, storage.join(folder, MODEL_FILE), self.unwrap(wrapped).state_dict())
        _save(storage, storage.join(folder, OPTIMIZER_FILE), optimizer.state_dict())

    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        # Every rank reads the same replicated files (no broadcast of the weights needed).
        self.unwrap(wrapped).load_state_dict(
            _load(storage, storage.join(folder, MODEL_FILE), self.device)
        )
        optimizer.load_state_dict(_load(storage, storage.join(folder, OPTIMIZER_FILE), self.device))

    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        if self.process.rank != 0:
            return None
        return {k: v.detach().cpu() for k, v in self.unwrap(wrapped).state_dict().items()}


SUPPORTED: dict[str, type[Strategy]] = {"ddp": DataParallel, "single": DataParallel}
PLANNED = ("fsdp", "fsdp_shard_grad_op", "fsdp_hybrid", "zero1", "zero2", "zero3")


def check_name(name: str) -> str:
    """The strategy name, or a ValueError that lists the valid ones."""
    if name in SUPPORTED:
        return name
    valid = ", ".join(SUPPORTED)
    if name in PLANNED:
        raise ValueError(f"strategy {name!r} is not supported yet; valid strategies: {valid}")
    raise ValueError(f"unknown strategy {name!r}; valid strategies: {valid}")


def check_world(name: str, world_size: int) -> None:
    """Refuse, before any process group exists, a strategy that cannot run at this size."""
    check_name(name)
    if name == "single" and world_size != 1:
        raise ValueError(
            f"strategy 'single' runs one process, but the world size is {world_size}; "
            "use --strategy ddp"
        )


def create(name: str, process: Process, device: str) -> Strategy:
    check_world(name, process.world_size)
    return SUPPORTED[name](name, process, device)


def _save(storage: Storage, path: str, obj: object) -> None:
    with storage.open_write(path) as f:
        torch.save(obj, f)


def _load(storage: Storage, path: str, device: str) -> dict:
    with storage.open_read(path) as f:
        return torch.load(f, map_location=device, weights_only=True)
