"""The ``triton`` runtime: a Triton model repository generated from a registered model folder.

``write`` (and ``python -m trainers.serving.triton_package MODEL_FOLDER REPOSITORY [--check]``,
its command line) writes, under REPOSITORY (the folder a Vertex upload names as its artifact_uri)::

    <name>/config.pbtxt   platform onnxruntime_onnx, the tensors, batching
    <name>/1/model.onnx   tokens [batch, width] int64 -> logits [batch, width, vocab] float32

The graph is the whole model's forward (``GPT.stage_forward``) exported by ``torch.onnx``
with the batch and the width dynamic, in one file (no external weights file: Triton's
onnxruntime backend and every local check read one path). Generation (the loop that picks
the next byte) stays with the client: Triton serves the logits of every position, the way
its onnxruntime backend serves any ONNX model.

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
from trainers.torch.model import GPT

VERSION = "1"
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
          batching: Batching | None = None) -> str:
    """Write the repository for ``model`` under ``repository`` (a local folder); returns the
    model's folder. Files are written to temporary names and renamed, so a reader never sees
    a half-written graph beside a config."""
    batching = batching or Batching()
    text = config_text(name, model.config.vocab_size, batching)
    folder = os.path.join(repository, check_name(name))
    version = os.path.join(folder, VERSION)
    os.makedirs(version, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=version, prefix=".export-") as scratch:
        staged = os.path.join(scratch, ONNX_FILE)
        export_onnx(model, staged, batching.max_batch_size)
        os.replace(staged, os.path.join(version, ONNX_FILE))
    staged_config = os.path.join(folder, f".{CONFIG_FILE}.tmp")
    with open(staged_config, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(staged_config, os.path.join(folder, CONFIG_FILE))
    return folder
