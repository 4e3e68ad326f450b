"""The keys and values of the sequences being generated: a static cache of `slots` sequences.

Each sequence holds one slot from its prefill to its last token: a row of every block's keys
and values, block_size positions long, allocated once when the server starts (no allocation
per request or per token, as a static cache in vLLM's terms; paging would share memory better
between short and long sequences, and the byte-level model's context is small enough not to
need it; a Hugging Face model's slots are its context long: --max-model-len bounds them). A
slot is free again the step its sequence ends, so a new request joins the running
batch at once.
"""

from __future__ import annotations

import torch

from trainers.torch.model import GPT


class CacheFull(RuntimeError):
    """Every slot holds a running sequence."""


class SlotCache:
    def __init__(self, model: GPT, slots: int) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        parameter = next(model.parameters())
        layers, heads, positions, width = cache_shape(model)
        shape = (slots, heads, positions, width)
        self.layers = [
            (torch.zeros(shape, dtype=parameter.dtype, device=parameter.device),
             torch.zeros(shape, dtype=parameter.dtype, device=parameter.device))
            for _ in range(layers)
        ]
        self.slots = slots
        self._free = list(range(slots - 1, -1, -1))  # pop() hands out the lowest first

    @property
    def free(self) -> int:
        return len(self._free)

    def take(self) -> int:
        if not self._free:
            raise CacheFull(f"all {self.slots} slots are in use")
        return self._free.pop()

    def give_back(self, slot: int) -> None:
        """The slot's old keys and values stay: a new sequence overwrites each position
        before it attends to it."""
        if not 0 <= slot < self.slots or slot in self._free:
            raise ValueError(f"slot {slot} is not in use")
        self._free.append(slot)

    def nbytes(self) -> int:
        return sum(k.numel() * k.element_size() * 2 for k, _ in self.layers)


def cache_shape(model: GPT) -> tuple[int, int, int, int]:
    """(layers, key/value heads, positions, head width) of one sequence's keys: a Hugging Face
    model (hf_model.py) names its own; the GPT's follow from its config."""
    if hasattr(model, "kv_shape"):
        return model.kv_shape()
    config = model.config
    return config.n_layer, config.n_head, config.block_size, config.n_embd // config.n_head
