"""A Hugging Face causal LM as the decoder runs it: the no-cache forward and a KV-cached one.

The model is the trainers' own (trainers/torch/models/hf.py: transformers' modules on
transformers' names), loaded from an export's safetensors. `forward_cached` runs the same
modules in the same order as transformers does, with one difference: the keys and values
live in the server's slot cache (kv_cache.py), a row per sequence, and every decoder layer's
attention writes and reads them through `_SlotView`, the `update(keys, values, layer_idx)`
call transformers' attention makes on any cache. Rotary positions are per sequence (each
row continues from its own length), and where sequences of different lengths share a step
a boolean mask keeps each query to its own sequence's keys up to its own position (and
within the sliding window, where the model has one). A lone sequence needs no mask: its
prefill is causal attention over its own keys and a decoding step attends to every key it
has, exactly as transformers' generate() attends, so greedy decoding gives its tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from trainers.torch.models.hf import CausalLM


class ServedLM(nn.Module):
    def __init__(self, lm: CausalLM, context: int, sliding_window: int | None) -> None:
        super().__init__()
        self.lm = lm
        self.config = lm.config
        self.context = context  # the longest sequence served (decoding.Decoder reads it)
        self.window = sliding_window

    def num_parameters(self) -> int:
        return self.lm.num_parameters()

    def kv_shape(self) -> tuple[int, int, int, int]:
        config = self.config
        heads = config.num_attention_heads
        width = getattr(config, "head_dim", None) or config.hidden_size // heads
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        return config.num_hidden_layers, kv_heads, self.context, width

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, None]:
        """The whole context of each row from position 0, causally (the no-cache path)."""
        return self.lm.stage_forward(idx), None

    def forward_cached(self, idx: torch.Tensor, rows: torch.Tensor, start: torch.Tensor,
                       cache: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        """The logits of tokens `idx` [batch, length] continuing the sequences cached at
        `rows` [batch] from positions `start` [batch], their keys and values written to
        `cache` (per layer (keys, values), each [slots, kv heads, context, head width])."""
        batch, length = idx.shape
        positions = start[:, None] + torch.arange(length, device=idx.device)
        end = int(start.max()) + length
        if end > self.context:
            raise ValueError(f"position {end - 1} >= the context {self.context}")
        mask = None
        alone = batch == 1 and (length == 1 or end == length)
        if not alone or (self.window is not None and end > self.window):
            keys = torch.arange(end, device=idx.device)[None, None, None, :]
            mask = keys <= positions[:, None, :, None]  # [batch, 1 (heads), length, keys]
            if self.window is not None:
                mask = mask & (keys > positions[:, None, :, None] - self.window)
        view = _SlotView(cache, rows, positions, end)
        base = self.lm.model
        x = base.embed_tokens(idx)
        position_embeddings = base.rotary_emb(x, positions)
        for layer in base.layers.values():
            x = layer(x, attention_mask=mask, position_ids=positions, cache=view,
                      position_embeddings=position_embeddings)
        return self.lm.lm_head(base.norm(x))


class _SlotView:
    """The slot cache as transformers' attention sees a cache for one forward: `update`
    writes the new keys and values at their rows and positions and gives back each row's
    keys and values from position 0 to the step's end."""

    def __init__(self, cache: Sequence[tuple[torch.Tensor, torch.Tensor]], rows: torch.Tensor,
                 positions: torch.Tensor, end: int) -> None:
        self.cache = cache
        self.where = (rows[:, None].expand_as(positions), positions)  # [batch, length] each
        first = int(rows[0])
        batch = rows.shape[0]
        # Consecutive rows (slots are handed out lowest first) are read as a view, others
        # gathered.
        consecutive = torch.equal(rows, torch.arange(first, first + batch, device=rows.device))
        self.span = slice(first, first + batch) if consecutive else rows
        self.end = end

    def update(self, keys: torch.Tensor, values: torch.Tensor, layer_idx: int,
               *args: object, **kwargs: object) -> tuple[torch.Tensor, torch.Tensor]:
        cached_keys, cached_values = self.cache[layer_idx]
        rows, positions = self.where
        # [batch, heads, length, width] -> the [batch, length, heads, width] that indexing
        # rows and positions (dims 0 and 2) selects.
        cached_keys[rows, :, positions] = keys.transpose(1, 2).to(cached_keys.dtype)
        cached_values[rows, :, positions] = values.transpose(1, 2).to(cached_values.dtype)
        return (cached_keys[self.span, :, :self.end], cached_values[self.span, :, :self.end])
