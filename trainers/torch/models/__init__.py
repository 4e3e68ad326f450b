"""Model families the PyTorch trainer trains, and what the strategies ask of them.

Three families: the byte-level GPT of trainers/torch/model.py (the `tiny` and `small` presets),
Hugging Face causal LMs (hf.py: transformers' own decoder layers on transformers' parameter
names) and vision-language models (vlm.py: Qwen2-VL, data parallelism only). The strategies
never look inside a model; they ask here:

- `transformer_blocks(model)`: the repeated blocks, in order, that FSDP shards one by one and
  activation checkpointing wraps (a pipeline stage's own share of them);
- `input_embedding(model)` / `output_head(model)`: the token embedding and the output head a
  model (or pipeline stage) holds, None where it holds none;
- `materialise(model, device)`: a model built on the meta device (and perhaps already split by
  the strategy) gets this rank's part of its weights, one parameter at a time; a model built
  with real weights (the GPT) is left as it is;
- `pipeline_stage(...)`, `parallelize(...)`, `tied_names(model)`: one pipeline stage of the
  model, its tensor-parallel split, and the names of a tied embedding and head.

`build_model` makes the model a run trains: the GPT on the CPU, or a Hugging Face model on the meta
device (or under the strategy's own building context: DeepSpeed ZeRO-3's `zero.Init`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from torch import nn

from trainers.torch.model import GPT, GPTStage
from trainers.torch.models import hf_config, hf_weights, vlm
from trainers.torch.models.hf import EMBEDDING, HEAD, CausalLM

if TYPE_CHECKING:  # trainers.torch.config imports the blocks from here
    from torch.distributed.device_mesh import DeviceMesh

    from trainers.torch.config import TrainConfig

GPT_TIED = ("wte.weight", "lm_head.weight")


def uses_hf(config: TrainConfig) -> bool:
    """Whether the run trains a Hugging Face model (else the preset's GPT)."""
    return bool(config.hf_config or config.init_from)


def hf_spec(config: TrainConfig) -> hf_config.ModelSpec | None:
    return hf_config.spec_for(config.hf_config, config.init_from) if uses_hf(config) else None


def build_model(
    config: TrainConfig, context: contextlib.AbstractContextManager | None = None
) -> nn.Module:
    """The model of the run: see the module's docstring."""
    spec = hf_spec(config)
    if spec is None:
        return GPT(config.model, seed=config.seed)
    if vlm.is_vlm(spec):
        return vlm.build(spec, hf_weights.source_for(config.init_from, config.seed), context)
    return hf_weights.build(spec, hf_weights.source_for(config.init_from, config.seed), context)


def on_device(model: nn.Module, device: str) -> nn.Module:
    """The GPT moved to the device; a Hugging Face model gets its weights there when the
    strategy materialises it."""
    return model if isinstance(model, CausalLM) else model.to(device)


def pipeline_stage(
    model: nn.Module, config: TrainConfig, layers: Sequence[int], first: bool, last: bool
) -> nn.Module:
    """One pipeline stage cut from `model` (built, not materialised yet)."""
    if isinstance(model, CausalLM):
        return model.stage(layers, first, last)
    return GPTStage(config.model, config.seed, layers, first=first, last=last)


def parallelize(model: nn.Module, mesh: DeviceMesh, sequence_parallel: bool) -> None:
    """Tensor parallelism over `mesh`, in place. (DTensor's modules are imported here, when a
    run splits a model: seconds of start-up that a data-parallel run does without.)"""
    if isinstance(model, CausalLM):
        from trainers.torch.models import hf_tensor_parallel

        hf_tensor_parallel.parallelize(model, mesh)
    else:
        from trainers.torch import tensor_parallel

        tensor_parallel.parallelize(model, mesh, sequence_parallel)


def tied_names(model: nn.Module) -> tuple[str, str] | None:
    """(embedding, head) parameter names when the two share one matrix, else None."""
    if isinstance(model, CausalLM):
        return (EMBEDDING, HEAD) if model.tied else None
    return GPT_TIED


def transformer_blocks(model: nn.Module) -> list[nn.Module]:
    """The model's transformer blocks, in order (a pipeline stage: the ones it holds)."""
    if isinstance(model, vlm.VisionLM):
        return model.blocks()
    if isinstance(model, CausalLM):
        return list(model.model.layers.values())
    if isinstance(model, GPT):
        return list(model.blocks.values())
    raise TypeError(f"not a model this trainer knows: {type(model).__name__}")


def input_embedding(model: nn.Module) -> nn.Module | None:
    if isinstance(model, vlm.VisionLM):
        return model.model.language_model.embed_tokens
    if isinstance(model, CausalLM):
        return model.model.embed_tokens
    return model.wte


def output_head(model: nn.Module) -> nn.Module | None:
    return model.lm_head


def is_meta(model: nn.Module) -> bool:
    """Whether the model still waits for its weights (built on the meta device)."""
    return any(p.is_meta for p in model.parameters())


def materialise(model: nn.Module, device: str) -> nn.Module:
    """This rank's weights in place of the meta tensors (see hf.py); a no-op for a model that
    has them."""
    if isinstance(model, CausalLM) and is_meta(model):
        model.materialise(device)
    return model
