"""Model families the PyTorch trainer trains, and what the strategies ask of them.

Two families: the byte-level GPT of trainers/torch/model.py (the `tiny` and `small` presets) and
Hugging Face causal LMs (hf.py: transformers' own decoder layers on transformers' parameter
names). The strategies never look inside a model; they ask here:

- `transformer_blocks(model)`: the repeated blocks, in order, that FSDP shards one by one and
  activation checkpointing wraps (a pipeline stage's own share of them);
- `input_embedding(model)` / `output_head(model)`: the token embedding and the output head a
  model (or pipeline stage) holds, None where it holds none;
- `materialise(model, device)`: a model built on the meta device (and perhaps already split by
  the strategy) gets this rank's part of its weights, one parameter at a time; a model built
  with real weights (the GPT) is left as it is.
"""

from __future__ import annotations

from torch import nn

from trainers.torch.model import GPT
from trainers.torch.models.hf import CausalLM


def transformer_blocks(model: nn.Module) -> list[nn.Module]:
    """The model's transformer blocks, in order (a pipeline stage: the ones it holds)."""
    if isinstance(model, CausalLM):
        return list(model.model.layers.values())
    if isinstance(model, GPT):
        return list(model.blocks.values())
    raise TypeError(f"not a model this trainer knows: {type(model).__name__}")


def input_embedding(model: nn.Module) -> nn.Module | None:
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
