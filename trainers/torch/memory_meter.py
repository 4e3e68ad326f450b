"""The tensor memory a rank holds, measured op by op on any device, with an optional limit.

On a GPU the figure a memory plan is checked against is the allocator's peak
(``torch.cuda.max_memory_allocated``): the bytes of live tensors, not the process's resident
set. A CPU has no such counter, and its resident set mixes tensors with the interpreter, the
libraries and the allocator's free lists. This meter gives a CPU run the GPU's figure: a
dispatch mode sees every tensor an operator returns, keeps a weak reference to its storage, and
after each operator sums the bytes of the storages still alive (storages shrunk in place count
at their new size: FSDP frees a gathered layer by resizing its storage to 0). The peak of that
sum is the rank's peak tensor memory.

``--set memory_limit_mib=N`` makes the meter a device of N MiB: an operator that leaves more
than that alive fails the run, as running out of a GPU's memory does. A test gives a model four
times one rank's limit and checks that a sharded layout trains within it: no rank ever held the
whole model, not even while building it.

What it does not see: memory an operator uses only while it runs (its scratch space), buffers
a collective library keeps outside torch (gloo's), and tensors made before it starts (the
corpus). Every operator pays a sum over the live storages, so it is for measurement runs.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.weak import WeakIdKeyDictionary

MIB = 2**20


class MemoryLimitExceeded(RuntimeError):
    """A rank's tensors outgrew the limit it was given."""


class TensorMemoryMeter(TorchDispatchMode):
    """Peak bytes of live tensor storage while active; raises past ``limit_bytes`` (0: none)."""

    def __init__(self, limit_bytes: int = 0, rank: int = 0) -> None:
        super().__init__()
        self.limit_bytes = limit_bytes
        self.rank = rank
        self.live: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self.current_bytes = 0
        self.peak_bytes = 0
        self.active = False

    def __enter__(self) -> TensorMemoryMeter:
        self.active = True
        return super().__enter__()

    def close(self) -> None:
        """Stop measuring (idempotent): the peak stays readable."""
        if self.active:
            self.active = False
            self.__exit__(None, None, None)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        # What an operator returns that aliases an input (a view, an in-place result) is
        # memory that existed before it: counted only if it was already (a tensor made before
        # the meter started, the corpus say, is not the run's to count).
        inputs = {id(s) for s in map(_storage, tree_leaves((args, kwargs))) if s is not None}
        for leaf in tree_leaves(out):
            storage = _storage(leaf)
            if storage is not None and id(storage) not in inputs and storage not in self.live:
                self.live[storage] = None
        self.current_bytes = sum(storage.nbytes() for storage in self.live)
        if self.current_bytes > self.peak_bytes:
            self.peak_bytes = self.current_bytes
            if self.limit_bytes and self.peak_bytes > self.limit_bytes:
                limit = self.limit_bytes
                self.limit_bytes = 0  # the error's own clean-up must not fail again
                raise MemoryLimitExceeded(
                    f"rank {self.rank} held {self.peak_bytes / MIB:.1f} MiB of tensors after "
                    f"{func}, over its memory limit of {limit / MIB:.1f} MiB "
                    "(memory_limit_mib)")
        return out


def _storage(value: object) -> Any:
    """The storage behind a tensor an operator returned (a DTensor's local shard's), or None."""
    if not isinstance(value, torch.Tensor):
        return None
    local = getattr(value, "_local_tensor", None)  # a DTensor: what this rank holds
    tensor = local if isinstance(local, torch.Tensor) else value
    if tensor.device.type == "meta" or tensor.is_sparse:
        return None
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError):  # a subclass without storage of its own
        return None


def start(limit_mib: int, measure: bool, rank: int) -> TensorMemoryMeter | None:
    """A meter entered now when the run asked for one (a limit, or measure_memory)."""
    if not (limit_mib or measure):
        return None
    meter = TensorMemoryMeter(limit_mib * MIB, rank)
    meter.__enter__()
    return meter
