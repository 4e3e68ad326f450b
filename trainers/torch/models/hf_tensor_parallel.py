"""Tensor parallelism for a Hugging Face model, from the plan its config names.

transformers' configs carry `base_model_tp_plan`: for each decoder layer's linears, "colwise"
(q, k, v, gate and up projections: each rank computes its own heads and its slice of the MLP
width) or "rowwise" (o and down projections: one all-reduce each), the same Megatron split
trainers/torch/tensor_parallel.py applies to the GPT. Norms applied per head (Qwen3's q_norm
and k_norm, "replicated_with_grad_allreduce") see only this rank's heads: their weight stays
whole and its gradient, a partial sum on each rank, is summed across the tensor-parallel ranks
(the inputs are marked as split by heads, so the gradient arrives as a partial DTensor, which
the strategy's `match_gradient_placements` all-reduces).

The embedding and the head are split by vocabulary as the GPT's are: the embedding row-wise
(each rank looks up its rows, one all-reduce), the head column-wise with its logits left
sharded for the vocabulary-parallel loss.
"""

from __future__ import annotations

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    ParallelStyle,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

from trainers.torch.models.hf import CausalLM

LAYER_PATTERN = "layers.*."


def _style(name: str) -> ParallelStyle:
    if name == "colwise":
        return ColwiseParallel()
    if name == "rowwise":
        return RowwiseParallel()
    # (batch, sequence, heads, head width): this rank's heads, dimension 2.
    return SequenceParallel(sequence_dim=2, use_local_output=True)


SUPPORTED_STYLES = ("colwise", "rowwise", "replicated_with_grad_allreduce")


def plan_problems(config: object) -> list[str]:
    """What in the model's tp plan this trainer cannot apply."""
    plan = getattr(config, "base_model_tp_plan", None) or {}
    if not plan:
        return [f"{type(config).__name__} names no tensor-parallel plan (base_model_tp_plan)"]
    return [
        f"tp plan entry {key!r}: {style!r} (supported: {', '.join(SUPPORTED_STYLES)})"
        for key, style in plan.items()
        if style not in SUPPORTED_STYLES or not key.startswith(LAYER_PATTERN)
    ]


def parallelize(model: CausalLM, mesh: DeviceMesh) -> None:
    """Split `model` (the whole model or one pipeline stage of it) over `mesh`, in place."""
    plan: dict[str, ParallelStyle] = {}
    base = model.model
    if base.embed_tokens is not None:
        plan["model.embed_tokens"] = RowwiseParallel(
            input_layouts=Replicate(), output_layouts=Replicate())
    for pattern, style in model.config.base_model_tp_plan.items():
        suffix = pattern.removeprefix(LAYER_PATTERN)
        for key in base.layers:
            plan[f"model.layers.{key}.{suffix}"] = _style(style)
    if model.lm_head is not None:
        plan["lm_head"] = ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)
    tied = model.tied and base.embed_tokens is not None and model.lm_head is not None
    parallelize_module(model, mesh, plan)
    if tied:
        # Each side was distributed into a parameter of its own, both split by vocabulary
        # rows (Shard(0)): one DTensor serves both again.
        model.lm_head.weight = base.embed_tokens.weight
