"""The ``triton`` runtime: a Triton model repository generated from a registered model folder.

``write`` (and ``python -m trainers.serving.triton_package MODEL_FOLDER REPOSITORY [--check]``,
its command line) writes, under REPOSITORY (the folder a Vertex upload names as its artifact_uri)::

    <name>/config.pbtxt   platform onnxruntime_onnx, the tensors, batching
    <name>/1/model.onnx   tokens [batch, width] int64 -> logits [batch, width, vocab] float32
    <name>_step/...       the same weights as a KV-cached step (triton_step.py), onnxruntime
    <name>_generate/...   backend python: one request, one whole generation
                          (triton_generate_model.py, calling <name>_step by BLS)

The graphs are exported by ``torch.onnx`` with the batch and the width dynamic, each in one
file (no external weights file: Triton's onnxruntime backend and every local check read one
path). ``<name>`` serves the logits of every position, the way the onnxruntime backend serves
any ONNX model; ``<name>_generate`` is the model Vertex's predict route reaches (the
container's ``--vertex-ai-default-model``, controlplane/serving/registry.py): it takes the
contract's instances and answers their text, so the control plane sends one request per
generation and proxies the answer. The weights are in both graphs (a byte-level model's are
a few hundred KiB; the logits graph is what the checks compare with eager and a TensorRT
engine is built from).

``triton_package --check`` runs the checks of ``triton_check.py`` in the same process: the
config parses with Triton's own ModelConfig proto and the ONNX graph answers as the eager model
does; the checked repository is then published through the trainers' Storage (``triton_publish.py``:
REPOSITORY may be gs://), and one already published and checked is not built again. This is
what a triton model's packaging job runs at registration. The export and the checks need the
Triton environment (``make triton-env``, ``Dockerfile.triton-tools``); writing the config
text needs nothing but this module.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from contract.prediction import (
    INPUT_DATATYPE,
    INPUT_NAME,
    MAX_BATCH,
    OUTPUT_DATATYPE,
    OUTPUT_NAME,
)
from trainers.serving import triton_step
from trainers.torch.model import GPT

VERSION = "1"
GENERATE_SUFFIX = "_generate"
# Beside the generation model's model.py: the contract's parsing and stop logic, and the loop.
GENERATE_FILES = {"model.py": "trainers.serving.triton_generate_model",
                  "prediction.py": "contract.prediction"}


def generate_file(target: str) -> str:
    """The text of a file GENERATE_FILES names, read from its module's own file (wherever the
    project is installed: the packaging image installs it)."""
    import importlib.util

    spec = importlib.util.find_spec(GENERATE_FILES[target])
    assert spec is not None and spec.origin, GENERATE_FILES[target]
    with open(spec.origin, encoding="utf-8") as f:
        return f.read()
ONNX_FILE = "model.onnx"
CONFIG_FILE = "config.pbtxt"
# The opset the exporter writes and the onnxruntime in Triton images since 24.x reads.
OPSET = 20
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,62}$")


class RepositoryError(ValueError):
    """The repository cannot be written as asked; the message names the setting at fault."""


@dataclass(frozen=True)
class Batching:
    """Triton's dynamic batcher: requests of the same shape (the same prompt width: Triton
    batches only equal shapes of a non-ragged input) wait up to ``max_queue_delay_us`` to be
    served together, in a batch of a preferred size when enough arrive."""

    max_batch_size: int = MAX_BATCH  # Triton refuses a request of more rows
    preferred: tuple[int, ...] = (8, 32)
    max_queue_delay_us: int = 2000

    def check(self) -> None:
        if not 1 <= self.max_batch_size <= 1024:
            raise RepositoryError("max_batch_size: between 1 and 1024")
        if not self.preferred or any(not 1 <= p <= self.max_batch_size for p in self.preferred):
            raise RepositoryError(f"preferred batch sizes: each between 1 and max_batch_size "
                                  f"({self.max_batch_size}), got {list(self.preferred)}")
        if not 0 <= self.max_queue_delay_us <= 1_000_000:
            raise RepositoryError("max_queue_delay_us: between 0 and 1000000 (one second)")


def check_name(name: str) -> str:
    """A model name Triton and a folder both take (it becomes a path component)."""
    if not _NAME.match(name):
        raise RepositoryError(f"model name {name!r}: a letter, then up to 62 letters, digits, "
                              "'_' or '-'")
    return name


def config_text(name: str, vocab_size: int, batching: Batching) -> str:
    """config.pbtxt for the exported graph. With max_batch_size > 0 Triton adds the batch
    dimension itself, so the dims below leave it out: tokens [width], logits [width, vocab]."""
    check_name(name)
    batching.check()
    preferred = ", ".join(str(p) for p in sorted(set(batching.preferred)))
    return (
        f'name: "{name}"\n'
        'platform: "onnxruntime_onnx"\n'
        f"max_batch_size: {batching.max_batch_size}\n"
        f'input [\n  {{ name: "{INPUT_NAME}" data_type: TYPE_{INPUT_DATATYPE} dims: [ -1 ] }}\n]\n'
        f'output [\n  {{ name: "{OUTPUT_NAME}" data_type: TYPE_{OUTPUT_DATATYPE} '
        f"dims: [ -1, {vocab_size} ] }}\n]\n"
        "dynamic_batching {\n"
        f"  preferred_batch_size: [ {preferred} ]\n"
        f"  max_queue_delay_microseconds: {batching.max_queue_delay_us}\n"
        "}\n"
        f'version_policy: {{ specific: {{ versions: [ {VERSION} ] }} }}\n'
    )


def generate_config_text(name: str, model: GPT, batching: Batching) -> str:
    """config.pbtxt of the generation model ``<name>_generate``: one JSON instance a row in, its
    text and byte count out. Its dynamic batcher gathers concurrent requests into one loop;
    two instances let a second batch start while one generates."""
    check_name(name)
    batching.check()
    dims = ",".join(str(d) for d in triton_step.cache_dims(model))
    return (
        f'name: "{name}{GENERATE_SUFFIX}"\n'
        'backend: "python"\n'
        f"max_batch_size: {batching.max_batch_size}\n"
        'input [\n  { name: "instance" data_type: TYPE_STRING dims: [ 1 ] }\n]\n'
        "output [\n"
        '  { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] },\n'
        '  { name: "tokens" data_type: TYPE_INT32 dims: [ 1 ] }\n'
        "]\n"
        "instance_group [ { kind: KIND_CPU count: 2 } ]\n"
        "dynamic_batching {\n"
        f"  max_queue_delay_microseconds: {batching.max_queue_delay_us}\n"
        "}\n"
        f'parameters {{ key: "step_model" value: {{ string_value: '
        f'"{name}{triton_step.SUFFIX}" }} }}\n'
        f'parameters {{ key: "step_max_batch_size" value: {{ string_value: '
        f'"{batching.max_batch_size}" }} }}\n'
        f'parameters {{ key: "cache_dims" value: {{ string_value: "{dims}" }} }}\n'
        f'version_policy: {{ specific: {{ versions: [ {VERSION} ] }} }}\n'
    )


def texts(name: str, model: GPT, batching: Batching) -> dict[str, str]:
    """Every model folder's config.pbtxt, by folder name."""
    return {name: config_text(name, model.config.vocab_size, batching),
            f"{name}{triton_step.SUFFIX}": triton_step.config_text(
                f"{name}{triton_step.SUFFIX}", model, batching.max_batch_size),
            f"{name}{GENERATE_SUFFIX}": generate_config_text(name, model, batching)}


class Logits(nn.Module):
    """What is exported: tokens to the logits of every position."""

    def __init__(self, model: GPT) -> None:
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model.stage_forward(tokens)


def export_onnx(model: GPT, path: str, max_batch_size: int) -> None:
    """The model's forward as one ONNX file at ``path``, batch and width dynamic."""
    from torch.export import Dim

    batch = Dim("batch", min=1, max=max(max_batch_size, 2))
    width = Dim("width", min=1, max=model.config.block_size)
    example = torch.zeros((2, 8), dtype=torch.long)
    with torch.inference_mode():
        torch.onnx.export(Logits(model.cpu().eval()), (example,), path,
                          input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                          dynamic_shapes={"tokens": {0: batch, 1: width}},
                          opset_version=OPSET, dynamo=True, external_data=False,
                          verbose=False)


def write(model: GPT, repository: str, name: str = "gpt",
          batching: Batching | None = None, generation: bool = True) -> str:
    """Write the repository for ``model`` under ``repository`` (a local folder); returns the
    logits model's folder. ``generation``: the step and generation models beside it (a TensorRT
    build wants the logits graph alone). Files are written to temporary names and renamed, so
    a reader never sees a half-written graph beside a config."""
    batching = batching or Batching()
    configs = texts(name, model, batching)
    folder = os.path.join(repository, check_name(name))
    _export(folder, lambda path: export_onnx(model, path, batching.max_batch_size))
    _write_text(os.path.join(folder, CONFIG_FILE), configs[name])
    if generation:
        step = os.path.join(repository, f"{name}{triton_step.SUFFIX}")
        _export(step, lambda path: triton_step.export_onnx(model, path,
                                                           batching.max_batch_size, OPSET))
        _write_text(os.path.join(step, CONFIG_FILE), configs[os.path.basename(step)])
        generate = os.path.join(repository, f"{name}{GENERATE_SUFFIX}")
        os.makedirs(os.path.join(generate, VERSION), exist_ok=True)
        for target in GENERATE_FILES:
            _write_text(os.path.join(generate, VERSION, target), generate_file(target))
        _write_text(os.path.join(generate, CONFIG_FILE), configs[os.path.basename(generate)])
    return folder


def _export(folder: str, export: Callable[[str], None]) -> None:
    version = os.path.join(folder, VERSION)
    os.makedirs(version, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=version, prefix=".export-") as scratch:
        staged = os.path.join(scratch, ONNX_FILE)
        export(staged)
        os.replace(staged, os.path.join(version, ONNX_FILE))


def _write_text(path: str, text: str) -> None:
    staged = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(staged, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(staged, path)
