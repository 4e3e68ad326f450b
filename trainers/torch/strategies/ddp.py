"""DDP: every rank holds the whole model; gradients are averaged by all-reduce. With world size 1
this is the single-process path (the same code, a one-member process group)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from trainers.storage import Storage
from trainers.torch import activation_checkpointing, models
from trainers.torch.strategies.base import Strategy

MODEL_FILE = "model.pt"
OPTIMIZER_FILE = "optimizer.pt"


class DataParallel(Strategy):
    checkpoint_format = "torch"
    every_rank_writes = False
    supports_async_save = True

    def wrap(self, model: nn.Module) -> nn.Module:
        models.materialise(model, self.device)  # whole on every rank
        activation_checkpointing.apply(
            model, self.config.activation_checkpointing, self.config.compile_blocks)
        device_ids = [torch.device(self.device).index] if self.device.startswith("cuda") else None
        return DistributedDataParallel(model, device_ids=device_ids)

    def accumulating(self, wrapped: nn.Module) -> contextlib.AbstractContextManager:
        return wrapped.no_sync()

    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        if self.process.rank == 0:
            write(storage, folder, wrapped.module.state_dict(), optimizer.state_dict())

    def save_async(
        self, storage: Storage, folder: str, wrapped: nn.Module, optimizer
    ) -> Future[None]:
        if self.process.rank != 0:
            return _done()
        # Copied now, on this thread: the next optimizer step changes the tensors in place.
        model_state = cpu_copy(wrapped.module.state_dict())
        optimizer_state = cpu_copy(optimizer.state_dict())
        return _in_background(lambda: write(storage, folder, model_state, optimizer_state))

    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        # Every rank reads the same replicated files (no broadcast of the weights needed).
        wrapped.module.load_state_dict(
            read(storage, storage.join(folder, MODEL_FILE), self.device)
        )
        optimizer.load_state_dict(read(storage, storage.join(folder, OPTIMIZER_FILE), self.device))

    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        if self.process.rank != 0:
            return None
        return {k: v.detach().cpu() for k, v in wrapped.module.state_dict().items()}


def write(storage: Storage, folder: str, model_state: dict, optimizer_state: dict) -> None:
    """The replicated state's files (the `torch` checkpoint format), as one rank writes them."""
    for name, obj in ((MODEL_FILE, model_state), (OPTIMIZER_FILE, optimizer_state)):
        with storage.open_write(storage.join(folder, name)) as f:
            torch.save(obj, f)


def read(storage: Storage, path: str, device: str) -> dict:
    with storage.open_read(path) as f:
        return torch.load(f, map_location=device, weights_only=True)


def cpu_copy(value: Any) -> Any:
    """A copy with every tensor on the CPU (a tensor sharded across devices is gathered whole)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: cpu_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(cpu_copy(v) for v in value)
    return value


def _done() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


def _in_background(work: Callable[[], None]) -> Future[None]:
    """Run `work` on a thread; the future carries its outcome."""
    future: Future[None] = Future()

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=run, name="checkpoint-writer", daemon=True).start()
    return future
