"""Activation checkpointing of the transformer blocks: `none`, `selective` or `full`.

- full: each block keeps only its input for backward and runs its forward again there (the
  non-reentrant `torch.utils.checkpoint`, what `checkpoint_wrapper` runs): the least memory,
  one more forward of every block per step.
- selective: per-operator selective checkpointing (`create_selective_checkpoint_contexts`):
  the outputs of the matrix products are kept, everything else (attention, softmax, norms,
  activations, dropout) is recomputed from them in backward. Most of a block's memory, little
  of its compute: Korthikanti et al.'s selective recomputation, per operator.

The block's `forward` is replaced rather than the block wrapped in a module: a wrapper module
would put `_checkpoint_wrapped_module.` into every parameter's name, and checkpoints, exports
and the tensor-parallel plan all use the plain names. It is applied before FSDP shards the
blocks (FSDP's hooks stay outside the recomputed region: they gather the weights once before
the block's backward, which then recomputes) and after tensor parallelism (the recomputed
forward runs the same collectives).

`compile_blocks` compiles each block's forward (`torch.compile`, after checkpointing, as
torchtitan orders them); off by default.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch import nn
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
)

from trainers.config import CHECKPOINTING_MODES
from trainers.torch.models import transformer_blocks

MODES = CHECKPOINTING_MODES

# What selective checkpointing keeps: the matrix products' outputs (the expensive part to
# recompute). Attention itself (scaled_dot_product_attention in any kernel), softmax, norms
# and elementwise ops are recomputed.
_aten = torch.ops.aten
SAVED_OPS = frozenset({_aten.mm.default, _aten.addmm.default, _aten.bmm.default,
                       _aten.baddbmm.default})


def check_mode(mode: str) -> str:
    """The mode, or a ValueError naming the setting and the valid modes."""
    if mode not in MODES:
        raise ValueError(
            f"activation_checkpointing must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def apply(model: nn.Module, mode: str, compile_blocks: bool = False) -> None:
    """Checkpoint (and compile) every transformer block of `model` (the GPT or a Hugging Face
    model, or a pipeline stage of either: trainers/torch/models) in place."""
    check_mode(mode)
    if mode == "none" and not compile_blocks:
        return
    for block in transformer_blocks(model):
        forward = block.forward
        if mode == "full":
            forward = _checkpointed(forward, None)
        elif mode == "selective":
            forward = _checkpointed(forward, _selective_contexts)
        if compile_blocks:
            forward = torch.compile(forward)
        block.forward = forward  # an instance attribute: nn.Module.__call__ runs it


def _checkpointed(forward: Callable, context_fn: Callable | None) -> Callable:
    extra = {} if context_fn is None else {"context_fn": context_fn}

    @functools.wraps(forward)
    def run(*args, **kwargs):
        return checkpoint(forward, *args, use_reentrant=False, **extra, **kwargs)

    return run


def _keep_matmuls(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    return CheckpointPolicy.MUST_SAVE if op in SAVED_OPS else CheckpointPolicy.PREFER_RECOMPUTE


def _selective_contexts():
    return create_selective_checkpoint_contexts(_keep_matmuls)
