"""The activation memory of a forward pass, measured: the bytes of every tensor storage created
during it that is still alive when it returns (what the autograd graph and selective
checkpointing keep for backward, plus the output), counted once per storage.

Measured on the CPU with a dispatch mode and weak references, so it needs no GPU allocator; the
tensors a checkpointed block drops are gone by the time the forward returns and are not counted.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import torch
from torch.distributed.tensor import DTensor
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class _Created(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.storages: dict[int, tuple[StorageWeakRef, int]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_leaves(out):
            if isinstance(value, DTensor):
                value = value.to_local()  # the shard this rank holds
            if not isinstance(value, torch.Tensor):
                continue
            try:
                storage = value.untyped_storage()
                key = storage.data_ptr()
            except RuntimeError:
                continue  # a wrapper without storage of its own (a collective's pending result)
            self.storages.setdefault(key, (StorageWeakRef(storage), storage.nbytes()))
        return out

    def alive_bytes(self) -> int:
        gc.collect()
        return sum(size for ref, size in self.storages.values() if not ref.expired())


def forward_activation_bytes(forward: Callable[[], Any]) -> tuple[int, Any]:
    """(bytes kept alive by `forward()` when it returns, what it returned)."""
    created = _Created()
    with created:
        out = forward()
    return created.alive_bytes(), out
