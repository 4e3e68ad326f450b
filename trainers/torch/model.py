"""A small GPT (nanoGPT's shape): causal self-attention, MLP, pre-layer-norm, tied embeddings.

Laid out for tensor and pipeline parallelism as torchtitan's models are: the query, key and
value projections are separate linears (each splits by heads across tensor-parallel ranks), and
the blocks sit in a ModuleDict keyed by their index, so a pipeline stage that drops the blocks
other stages hold keeps every parameter's name ("blocks.3.attn.q.weight"). Checkpoints of any
parallel layout therefore share one set of names. `GPTStage` is one stage's part of the model.
Serving adds `forward_cached` beside `forward` (keys and values kept per sequence, one new
position a step: trainers/serving/decoding.py); training never calls it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from trainers.config import ModelConfig


class CausalSelfAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.head_dim = config.n_embd // config.n_head
        self.dropout = config.dropout
        self.q = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.k = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.v = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self._register_load_state_dict_pre_hook(_split_fused_qkv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        # (batch, heads, length, head width). Under tensor parallelism q, k and v hold this
        # rank's heads only: the head count is read from the width, not the config.
        q, k, v = (
            t(x).view(batch, length, -1, self.head_dim).transpose(1, 2)
            for t in (self.q, self.k, self.v)
        )
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        y = y.transpose(1, 2).contiguous().view(batch, length, -1)
        return self.resid_dropout(self.proj(y))

    def forward_cached(self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor],
                       rows: torch.Tensor, positions: torch.Tensor, width: int | None,
                       mask: torch.Tensor | None, span: slice | torch.Tensor) -> torch.Tensor:
        """Serving only: `forward` for new positions of sequences whose earlier keys and values
        are in `cache` (keys, values: [sequences, heads, block_size, head width]). Row b of x
        holds positions[b] of the sequence cached at rows[b]; its keys and values are written
        there, and it attends to the first `width` cached positions of that sequence (`mask`,
        GPT.forward_cached's, keeps each query to its own and earlier ones). `width` None: one
        sequence from position 0, attended as `forward` does. `span`: `rows`, or the same rows
        as a slice where they are consecutive (read as a view, not a copy)."""
        batch, length, _ = x.shape
        q, k, v = (
            t(x).view(batch, length, -1, self.head_dim).transpose(1, 2)
            for t in (self.q, self.k, self.v)
        )
        keys, values = cache
        # Written through a [sequences, positions, heads, width] view of the cache.
        where = (rows[:, None].expand(batch, length), positions)
        keys.transpose(1, 2).index_put_(where, k.transpose(1, 2))
        values.transpose(1, 2).index_put_(where, v.transpose(1, 2))
        if width is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = F.scaled_dot_product_attention(
                q, keys[span, :, :width], values[span, :, :width], attn_mask=mask)
        y = y.transpose(1, 2).contiguous().view(batch, length, -1)
        return self.proj(y)


def _split_fused_qkv(state: dict, prefix: str, *_args) -> None:
    """Models exported before q, k and v were separate hold one `qkv` linear (q, k, v stacked
    by rows): split it, so those checkpoints and exports still load."""
    for kind in ("weight", "bias"):
        fused = state.pop(f"{prefix}qkv.{kind}", None)
        if fused is not None:
            for name, part in zip("qkv", fused.chunk(3, dim=0), strict=True):
                state[f"{prefix}{name}.{kind}"] = part


class MLP(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))

    def forward_cached(self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor],
                       rows: torch.Tensor, positions: torch.Tensor, width: int | None,
                       mask: torch.Tensor | None, span: slice | torch.Tensor) -> torch.Tensor:
        x = x + self.attn.forward_cached(self.ln_1(x), cache, rows, positions, width, mask,
                                         span)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config: ModelConfig, seed: int) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleDict({str(i): Block(config) for i in range(config.n_layer)})
        self.ln_f = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied input and output embeddings
        self._init_weights(seed)

    def _init_weights(self, seed: int) -> None:
        """GPT-2 init from a private generator: the same weights for a seed on every rank,
        whatever the global RNG has been used for."""
        gen = torch.Generator().manual_seed(seed)
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layer)
        with torch.no_grad():
            for name, module in self.named_modules():
                if module is self.lm_head:
                    continue  # its weight is wte's, initialised as an embedding
                if isinstance(module, nn.Linear):
                    std = residual_std if name.endswith(".proj") else 0.02
                    if name.endswith(".attn.q"):
                        # q, k and v draw, in this order, what one fused (3 x width) matrix
                        # drew: the same initial model as before they were split.
                        attn = self.get_submodule(name.removesuffix(".q"))
                        stacked = torch.empty(3 * self.config.n_embd, self.config.n_embd)
                        stacked.normal_(0.0, std, generator=gen)
                        parts = (attn.q, attn.k, attn.v)
                        for part, rows in zip(parts, stacked.chunk(3), strict=True):
                            part.weight.copy_(rows)
                    elif not name.endswith((".attn.k", ".attn.v")):
                        module.weight.normal_(0.0, std, generator=gen)
                    if module.bias is not None:
                        module.bias.zero_()
                elif isinstance(module, nn.Embedding):
                    module.weight.normal_(0.0, 0.02, generator=gen)
                elif isinstance(module, nn.LayerNorm):
                    module.weight.fill_(1.0)
                    if module.bias is not None:
                        module.bias.zero_()

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())  # parameters() counts tied ones once

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        length = idx.shape[1]
        if length > self.config.block_size:
            raise ValueError(f"sequence of {length} > block_size {self.config.block_size}")
        pos = torch.arange(length, device=idx.device)
        return self.drop(self.wte(idx) + self.wpe(pos))

    def stage_forward(self, x: torch.Tensor) -> torch.Tensor:
        """What the parts this module holds compute: tokens in where it holds the embeddings
        (hidden states otherwise), logits out where it holds the head (hidden states
        otherwise). The whole model maps tokens to logits."""
        if self.wte is not None:
            x = self.embed(x)
        for block in self.blocks.values():
            x = block(x)
        if self.lm_head is not None:
            x = self.lm_head(self.ln_f(x))
        return x

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = self.stage_forward(idx)
        if targets is None:
            return logits, None
        return logits, lm_loss(logits, targets)

    def forward_cached(self, idx: torch.Tensor, rows: torch.Tensor, start: torch.Tensor,
                       cache: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        """Serving's KV-cached forward (training never calls it): the logits of tokens `idx`
        [batch, length] that continue the sequences cached at `rows` [batch] from positions
        `start` [batch] on, writing their keys and values into `cache` (one (keys, values)
        pair per block, each [sequences, heads, block_size, head width]). A prefill is one
        sequence from start 0 (attended exactly as `forward` attends it); a decoding step is
        one new token of each of many sequences of different lengths. Positions are learned,
        so a sequence ends at block_size: past it the caller slides the window with `forward`.
        """
        batch, length = idx.shape
        positions = start[:, None] + torch.arange(length, device=idx.device)
        end = int(start.max()) + length
        if end > self.config.block_size:
            raise ValueError(f"position {end - 1} >= block_size {self.config.block_size}")
        width: int | None = end
        mask = None
        if batch == 1 and end == length:
            width = None  # a prompt from position 0: causal attention over its own keys
        elif batch > 1 or length > 1:
            # Each query sees its own sequence's keys up to its position, not another
            # sequence's longer tail: [batch, 1 (heads), length, keys]. (One new byte of one
            # sequence sees every key up to its own: no mask.)
            keys = torch.arange(end, device=idx.device)
            mask = (keys[None, None, None, :] <= positions[:, None, :, None])
        first = int(rows[0])
        # Consecutive rows (the usual case: slots are handed out lowest first) are read as a
        # view of the cache; others are gathered, a copy of every key a step.
        consecutive = torch.equal(rows, torch.arange(first, first + batch, device=rows.device))
        span = slice(first, first + batch) if consecutive else rows
        x = self.wte(idx) + self.wpe(positions)
        for block, layer_cache in zip(self.blocks.values(), cache, strict=True):
            x = block.forward_cached(x, layer_cache, rows, positions, width, mask, span)
        return self.lm_head(self.ln_f(x))


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-byte cross-entropy (in fp32 whatever the logits' precision)."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


class GPTStage(GPT):
    """One pipeline stage's part of the GPT: the blocks `layers`, plus the embeddings on the
    first stage and the final norm and head on the last. Built whole from (config, seed), so
    it starts from exactly the full model's weights, then the other stages' parts are dropped;
    parameter names stay those of the full model. The last stage's head keeps its own copy of
    the tied embedding matrix; the strategy keeps the two copies equal."""

    def __init__(
        self, config: ModelConfig, seed: int, layers: Sequence[int], first: bool, last: bool
    ) -> None:
        super().__init__(config, seed)
        kept = {str(i) for i in layers}
        for key in [k for k in self.blocks if k not in kept]:
            del self.blocks[key]
        if not first:
            self.wte = self.wpe = None
        if not last:
            self.ln_f = self.lm_head = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.stage_forward(x)
