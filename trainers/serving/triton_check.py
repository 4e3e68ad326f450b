"""Checks of a generated Triton model repository (``triton_repo.py``), run in the Triton
environment (``make triton-env``):

- the config parses with Triton's own schema (the ModelConfig proto tritonclient ships:
  an unknown field, a misspelt enum or a wrong type is refused as tritonserver refuses it),
  and its tensors are the ONNX graph's, by name, type and rank (the onnxruntime backend
  refuses a model whose config disagrees with its graph, but only on the server);
- the ONNX graph, run by onnxruntime, gives the eager model's logits within 1e-4;
- the KV-cached step graph (triton_step.py) does too, over a prefill and the decoding steps
  after it with the keys and values it returned, and the generation model's config parses.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from trainers.serving import triton_repo, triton_step
from trainers.torch.model import GPT

TOLERANCE = 1e-4
# (batch, width) probes: one token, a small batch, a full context.
_PROBES = ((1, 1), (3, 11), (4, 0))


class RepositoryInvalid(ValueError):
    """The repository would not load or would answer wrongly; the message says where."""


def validate_config(folder: str) -> dict[str, object]:
    """Parse ``<folder>/config.pbtxt`` with Triton's ModelConfig proto and match its tensors
    with ``<folder>/1/model.onnx``; returns the parsed fields that matter, as JSON."""
    import onnx
    from google.protobuf import json_format

    path = os.path.join(folder, triton_repo.CONFIG_FILE)
    with open(path, encoding="utf-8") as f:
        config = parse_config(f.read(), path)
    if config.name != os.path.basename(folder.rstrip("/")):
        raise RepositoryInvalid(f"{path}: name {config.name!r} is not the folder's name")
    graph = onnx.load(os.path.join(folder, triton_repo.VERSION, triton_repo.ONNX_FILE)).graph
    batched = config.max_batch_size > 0
    for kind, declared, actual in (("input", config.input, graph.input),
                                   ("output", config.output, graph.output)):
        found = {t.name: t for t in actual}
        for tensor in declared:
            if tensor.name not in found:
                raise RepositoryInvalid(f"{path}: {kind} {tensor.name!r} is not in the graph "
                                        f"(it has {sorted(found)})")
            _match(path, kind, tensor, found[tensor.name], batched)
    return json_format.MessageToDict(config, preserving_proto_field_name=True)


def parse_config(text: str, path: str) -> Any:
    """``text`` parsed by Triton's ModelConfig proto, as tritonserver parses config.pbtxt."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    try:
        return text_format.Parse(text, model_config_pb2.ModelConfig())
    except text_format.ParseError as exc:
        raise RepositoryInvalid(f"{path}: {exc}") from exc


def _match(path: str, kind: str, tensor: Any, value_info: Any, batched: bool) -> None:
    """``tensor``: a ModelInput or ModelOutput; ``value_info``: the graph's onnx.ValueInfoProto."""
    import onnx
    from tritonclient.grpc import model_config_pb2

    elem = value_info.type.tensor_type.elem_type
    want = {onnx.TensorProto.INT64: model_config_pb2.TYPE_INT64,
            onnx.TensorProto.FLOAT: model_config_pb2.TYPE_FP32}.get(elem)
    if want != tensor.data_type:
        raise RepositoryInvalid(f"{path}: {kind} {tensor.name!r} is declared "
                                f"{model_config_pb2.DataType.Name(tensor.data_type)}, "
                                f"the graph's is {onnx.TensorProto.DataType.Name(elem)}")
    dims = [d.dim_value if d.HasField("dim_value") else -1
            for d in value_info.type.tensor_type.shape.dim]
    declared = ([-1] if batched else []) + list(tensor.dims)
    fits = len(dims) == len(declared) and all(
        a in (-1, b) for a, b in zip(declared, dims, strict=True))
    if not fits:
        raise RepositoryInvalid(f"{path}: {kind} {tensor.name!r} has dims {declared} with "
                                f"the batch, the graph's are {dims} (-1: dynamic)")


@torch.inference_mode()
def compare_with_eager(folder: str, model: GPT, tolerance: float = TOLERANCE) -> float:
    """The largest difference between onnxruntime's logits and the eager model's over the
    probes; RepositoryInvalid when one exceeds ``tolerance``."""
    import onnxruntime

    path = os.path.join(folder, triton_repo.VERSION, triton_repo.ONNX_FILE)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    model = model.cpu().eval()
    generator = torch.Generator().manual_seed(0)
    worst = 0.0
    for batch, width in _PROBES:
        width = width or model.config.block_size
        tokens = torch.randint(0, model.config.vocab_size, (batch, width), generator=generator)
        want = model.stage_forward(tokens).numpy()
        got = session.run([triton_repo.OUTPUT_NAME], {triton_repo.INPUT_NAME: tokens.numpy()})[0]
        if got.shape != want.shape:
            raise RepositoryInvalid(f"{path}: logits of shape {got.shape} for tokens "
                                    f"{tuple(tokens.shape)}; eager gives {want.shape}")
        worst = max(worst, float(abs(got - want).max()))
    if worst > tolerance:
        raise RepositoryInvalid(f"{path}: onnxruntime differs from eager by {worst:.3g} "
                                f"(tolerance {tolerance:g})")
    return worst


def validate_generation(repository: str, name: str) -> dict[str, object]:
    """The step graph's config against its graph and the generation model's config parsed,
    as ``validate_config`` does for the logits model; returns both, parsed, by folder."""
    from google.protobuf import json_format

    step = validate_config(os.path.join(repository, f"{name}{triton_step.SUFFIX}"))
    folder = os.path.join(repository, f"{name}{triton_repo.GENERATE_SUFFIX}")
    path = os.path.join(folder, triton_repo.CONFIG_FILE)
    with open(path, encoding="utf-8") as f:
        config = parse_config(f.read(), path)
    if config.name != os.path.basename(folder):
        raise RepositoryInvalid(f"{path}: name {config.name!r} is not the folder's name")
    for module in triton_repo.GENERATE_FILES:
        if not os.path.isfile(os.path.join(folder, triton_repo.VERSION, module)):
            raise RepositoryInvalid(f"{folder}: {triton_repo.VERSION}/{module} is missing")
    return {os.path.basename(folder): json_format.MessageToDict(
                config, preserving_proto_field_name=True),
            f"{name}{triton_step.SUFFIX}": step}


@torch.inference_mode()
def compare_step_with_eager(folder: str, model: GPT, tolerance: float = TOLERANCE) -> float:
    """The largest difference between the step graph's logits and the eager model's over the
    whole context, for a prefill of two prompts of different lengths (one right-padded), four
    decoding steps on the keys and values the graph returned, and a full window from 0."""
    import numpy as np
    import onnxruntime

    path = os.path.join(folder, triton_repo.VERSION, triton_repo.ONNX_FILE)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    model = model.cpu().eval()
    layers, heads, block, head = triton_step.cache_dims(model)
    generator = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    contexts = [torch.randint(0, vocab, (n,), generator=generator).tolist()
                for n in (min(9, block - 4), min(5, block - 4))]
    keys = np.zeros((2, layers, heads, block, head), dtype=np.float32)
    values = np.zeros_like(keys)
    tokens = np.zeros((2, len(contexts[0])), dtype=np.int64)
    for row, context in enumerate(contexts):
        tokens[row, :len(context)] = context
    starts = [0, 0]
    worst = 0.0
    for _ in range(5):  # the prefill, then a byte a step
        logits, new_keys, new_values = session.run(None, {
            "tokens": tokens, "start": np.array(starts, dtype=np.int64)[:, None],
            "past_keys": keys, "past_values": values})
        next_tokens = []
        for row, context in enumerate(contexts):
            fed = len(context) - starts[row]
            want = model.stage_forward(torch.tensor([context]))[0, -1].numpy()
            worst = max(worst, float(abs(logits[row, fed - 1] - want).max()))
            keys[row, :, :, starts[row]:len(context)] = new_keys[row, :, :, :fed]
            values[row, :, :, starts[row]:len(context)] = new_values[row, :, :, :fed]
            starts[row] = len(context)
            context.append(int(want.argmax()))
            next_tokens.append(context[-1])
        tokens = np.array(next_tokens, dtype=np.int64)[:, None]
    window = torch.randint(0, vocab, (1, block), generator=generator)
    logits = session.run(["logits"], {"tokens": window.numpy(),
                                      "start": np.zeros((1, 1), dtype=np.int64),
                                      "past_keys": keys[:1], "past_values": values[:1]})[0]
    worst = max(worst, float(abs(logits - model.stage_forward(window).numpy()).max()))
    if worst > tolerance:
        raise RepositoryInvalid(f"{path}: the cached step differs from eager by {worst:.3g} "
                                f"(tolerance {tolerance:g})")
    return worst
