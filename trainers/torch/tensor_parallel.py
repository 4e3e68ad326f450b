"""Tensor parallelism for the GPT with PyTorch's DTensor API (`torch.distributed.tensor.parallel`).

Megatron's split, as torchtitan writes it: in every block the query, key, value and MLP input
linears are column-parallel (each rank computes its own heads and its slice of the hidden
width, no communication), the attention and MLP output linears row-parallel (one all-reduce
each); the token embedding is split by vocabulary (each rank looks up its rows, one
all-reduce), and the output head too, its logits left sharded by vocabulary for a
vocabulary-parallel cross-entropy (`loss_parallel`): the full logits never exist on one rank.

With sequence parallelism the layer norms and dropouts between those regions work on a slice
of the sequence instead of all of it: the all-reduces become a reduce-scatter and an
all-gather (the same traffic) and the activations there take 1/tp of the memory.

Parameters the plan does not split (position embedding; the norms without sequence
parallelism) stay plain tensors, identical on every tensor-parallel rank.
"""

from __future__ import annotations

import contextlib

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    PrepareModuleOutput,
    RowwiseParallel,
    SequenceParallel,
    loss_parallel,
    parallelize_module,
)

from trainers.torch.model import GPT


def parallelize(model: GPT, mesh: DeviceMesh, sequence_parallel: bool) -> None:
    """Split `model` (the whole GPT or one pipeline stage of it) over `mesh`, in place."""
    sp = sequence_parallel
    # Between blocks the hidden states are whole (Replicate) or, with sequence parallelism,
    # split along the sequence (Shard(1)).
    between = Shard(1) if sp else Replicate()
    plan: dict = {}
    if model.wte is not None:
        plan["wte"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate())
        if sp:
            # Token plus position embedding is whole; each rank keeps its slice of the
            # sequence (a local slice going forward, an all-gather of gradients going back).
            plan["drop"] = PrepareModuleOutput(
                output_layouts=Replicate(), desired_output_layouts=Shard(1)
            )
    for key in model.blocks:
        prefix = f"blocks.{key}"
        plan.update(
            {
                f"{prefix}.attn.q": ColwiseParallel(),
                f"{prefix}.attn.k": ColwiseParallel(),
                f"{prefix}.attn.v": ColwiseParallel(),
                f"{prefix}.attn.proj": RowwiseParallel(output_layouts=between),
                f"{prefix}.mlp.fc": ColwiseParallel(),
                f"{prefix}.mlp.proj": RowwiseParallel(output_layouts=between),
            }
        )
        if sp:
            plan.update(
                {
                    f"{prefix}.ln_1": SequenceParallel(),
                    f"{prefix}.ln_2": SequenceParallel(),
                    f"{prefix}.attn": PrepareModuleInput(
                        input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)
                    ),
                    f"{prefix}.mlp": PrepareModuleInput(
                        input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)
                    ),
                }
            )
    if model.lm_head is not None:
        if sp:
            plan["ln_f"] = SequenceParallel()
        plan["lm_head"] = ColwiseParallel(
            input_layouts=between, output_layouts=Shard(-1), use_local_output=False
        )
    tied = model.wte is not None and model.lm_head is not None
    parallelize_module(model, mesh, plan)
    if tied:
        # Each side was distributed into a parameter of its own; both are split by
        # vocabulary rows (Shard(0)), so one DTensor serves both again.
        model.lm_head.weight = model.wte.weight


def loss_context(tp: int) -> contextlib.AbstractContextManager:
    """Around the loss and its backward: the cross-entropy of vocabulary-sharded logits."""
    return loss_parallel() if tp > 1 else contextlib.nullcontext()
