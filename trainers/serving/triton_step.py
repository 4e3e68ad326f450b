"""The ONNX graph a Triton repository's generation loop runs each step: the model's forward over
new tokens that continue sequences whose earlier keys and values the caller holds (a KV cache).

    <name>_step/config.pbtxt   platform onnxruntime_onnx
    <name>_step/1/model.onnx   tokens [b, w] INT64, start [b, 1] INT64,
                               past_keys, past_values [b, layers, heads, block_size, head] FP32
                            -> logits [b, w, vocab] FP32,
                               keys, values [b, layers, heads, w, head] FP32 (the new tokens')

Row r's tokens sit at positions start[r] .. start[r] + w - 1. They attend to the first start[r]
cached positions of their own row and, causally, to each other: the cache is a static one,
block_size long (kv_cache.py's layout, a row per sequence), so no tensor ever has a dimension
of zero (Triton and onnxruntime both handle none well) and a prefill is the same call with
start 0, every cached position masked out. The caller (triton_generate_model.py) writes the
returned keys and values into its rows at start..start+w. Rows of a batch are right-padded to
the longest: a padded position's keys are never attended by a real one (it comes after it),
and the step that reaches that position overwrites them, as decoding.py reasons.

Each step sends the whole cache row (block_size positions) to the graph, as Triton passes
tensors by value between models: O(block_size) bytes a token, which is the price of keeping
the loop in a Python model and the graph in the onnxruntime backend (a 64-position byte model's
row is 64 KiB). The masked positions cost attention work too, but a fixed amount a step: the
time per token stays flat as the output grows.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from trainers.torch.model import GPT

SUFFIX = "_step"
INPUTS = ("tokens", "start", "past_keys", "past_values")
OUTPUTS = ("logits", "keys", "values")


def cache_dims(model: GPT) -> tuple[int, int, int, int]:
    """(layers, heads, positions, head width) of one sequence's cache row."""
    config = model.config
    return config.n_layer, config.n_head, config.block_size, config.n_embd // config.n_head


class CachedStep(nn.Module):
    """What is exported: GPT.forward_cached's arithmetic with the cache passed in and the new
    keys and values passed out, in place of writes into a cache the module holds."""

    def __init__(self, model: GPT) -> None:
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor, start: torch.Tensor, past_keys: torch.Tensor,
                past_values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        model = self.model
        batch, width = tokens.shape
        layers, _, block, head = cache_dims(model)
        offsets = torch.arange(width, device=tokens.device)
        positions = start + offsets[None, :]  # [b, w]
        x = model.wte(tokens) + model.wpe(positions)
        # [b, 1, w, block + w]: the cached positions before the row's start, then the new
        # tokens up to each query's own.
        cached = (torch.arange(block, device=tokens.device)[None, None, :]
                  < start[:, :, None]).expand(batch, width, block)
        causal = (offsets[None, :] <= offsets[:, None])[None].expand(batch, width, width)
        mask = torch.cat([cached, causal], dim=-1)[:, None]
        new_keys, new_values = [], []
        for index, block_module in enumerate(model.blocks.values()):
            attn = block_module.attn
            h = block_module.ln_1(x)
            q, k, v = (t(h).view(batch, width, -1, head).transpose(1, 2)
                       for t in (attn.q, attn.k, attn.v))
            keys = torch.cat([past_keys[:, index], k], dim=2)
            values = torch.cat([past_values[:, index], v], dim=2)
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
            x = x + attn.proj(y.transpose(1, 2).reshape(batch, width, -1))
            x = x + block_module.mlp(block_module.ln_2(x))
            new_keys.append(k)
            new_values.append(v)
        logits = model.lm_head(model.ln_f(x))
        assert len(new_keys) == layers
        return logits, torch.stack(new_keys, dim=1), torch.stack(new_values, dim=1)


def export_onnx(model: GPT, path: str, max_batch_size: int, opset: int) -> None:
    """The cached step as one ONNX file at ``path``: the batch and the width dynamic."""
    from torch.export import Dim

    layers, heads, block, head = cache_dims(model)
    batch = Dim("batch", min=1, max=max(max_batch_size, 2))
    width = Dim("width", min=1, max=block)
    example = (torch.zeros((2, 8), dtype=torch.long), torch.zeros((2, 1), dtype=torch.long),
               torch.zeros((2, layers, heads, block, head)),
               torch.zeros((2, layers, heads, block, head)))
    with torch.inference_mode():
        torch.onnx.export(CachedStep(model.cpu().eval()), example, path,
                          input_names=list(INPUTS), output_names=list(OUTPUTS),
                          dynamic_shapes={"tokens": {0: batch, 1: width}, "start": {0: batch},
                                          "past_keys": {0: batch}, "past_values": {0: batch}},
                          opset_version=opset, dynamo=True, external_data=False,
                          verbose=False)


def config_text(name: str, model: GPT, max_batch_size: int) -> str:
    """config.pbtxt of the step graph (the batch dimension left out: Triton adds it)."""
    layers, heads, block, head = cache_dims(model)
    cache = f"dims: [ {layers}, {heads}, {block}, {head} ]"
    new = f"dims: [ {layers}, {heads}, -1, {head} ]"
    return (
        f'name: "{name}"\n'
        'platform: "onnxruntime_onnx"\n'
        f"max_batch_size: {max_batch_size}\n"
        "input [\n"
        '  { name: "tokens" data_type: TYPE_INT64 dims: [ -1 ] },\n'
        '  { name: "start" data_type: TYPE_INT64 dims: [ 1 ] },\n'
        f'  {{ name: "past_keys" data_type: TYPE_FP32 {cache} }},\n'
        f'  {{ name: "past_values" data_type: TYPE_FP32 {cache} }}\n'
        "]\n"
        "output [\n"
        f'  {{ name: "logits" data_type: TYPE_FP32 dims: [ -1, {model.config.vocab_size} ] }},\n'
        f'  {{ name: "keys" data_type: TYPE_FP32 {new} }},\n'
        f'  {{ name: "values" data_type: TYPE_FP32 {new} }}\n'
        "]\n"
        'version_policy: { specific: { versions: [ 1 ] } }\n'
    )
