"""Vision-language models in the trainer: Qwen2-VL, with transformers' own modules on
transformers' names.

`VisionLM` holds the parts of a `Qwen2VLForConditionalGeneration` under the names transformers
gives them (`model.visual.*`, the vision tower; `model.language_model.*`, the decoder; `lm_head`),
so its state dict and checkpoints carry transformers' names; the export and --init-from use the
names the published safetensors files hold (`model.layers.*`, `visual.*`: SAVED_PREFIXES), what
`from_pretrained` reads. It keeps
`CausalLM`'s weights machinery (hf.py): built on the meta device, materialised per rank from
fresh values seeded per module name or from safetensors slices, filled into ZeRO-3 partitions.

The forward pass is transformers' own `Qwen2VLModel` (vision tower, image features scattered
into the image placeholder tokens, multimodal rotary positions from the image grids, the
decoder) and the head. The loss is the text tokens' (labels of -100 elsewhere, shifted by one
as transformers does), summed and divided by the global batch's label-token count per sample
times this batch's samples (`VLMBatch.loss_tokens`): micro-batches and data-parallel ranks
then average to the mean over every label token of the global batch, transformers' loss on it.

The family is split by data parallelism only (single, ddp, fsdp, zero1/2/3): tensor and
pipeline parallelism are refused (`split_problems`).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from trainers.torch.models.hf import CausalLM
from trainers.torch.models.hf_config import ModelSpec
from trainers.torch.models.hf_weights import FreshWeights

# The architectures (config.json "architectures") of this family, and their model_type.
ARCHITECTURES = {"Qwen2VLForConditionalGeneration": "qwen2_vl"}
IGNORE = -100  # the label of a token without loss (transformers' ignore index)
# Module names -> the names in safetensors files: transformers 5 nests the decoder and the
# vision tower under `model.` but saves (and the published weights, vLLM and the serving
# containers read) the flat names of the first Qwen2-VL release.
SAVED_PREFIXES = (("model.language_model.", "model."), ("model.visual.", "visual."))


def saved_name(name: str) -> str:
    for prefix, saved in SAVED_PREFIXES:
        if name.startswith(prefix):
            return saved + name[len(prefix):]
    return name


def saved_names(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A state dict under the names the files hold."""
    return {saved_name(name): tensor for name, tensor in weights.items()}


class SavedNames:
    """A weights source (hf_weights.py) asked with module names, read with the files' names."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.seed = source.seed

    def has(self, name: str) -> bool:
        return self.source.has(saved_name(name))

    def read(self, name: str, index: tuple[slice, ...] | None) -> torch.Tensor:
        return self.source.read(saved_name(name), index)


def is_vlm(spec: ModelSpec | None) -> bool:
    return spec is not None and spec.architecture in ARCHITECTURES


@dataclass
class VLMBatch:
    """Image + text examples padded to one length: what `VisionLM.forward` takes. Sliced by
    example (`batch[rows]`, the strategies' micro-batches) and moved with `.to(device)`."""

    input_ids: torch.Tensor  # (examples, length)
    attention_mask: torch.Tensor  # (examples, length): 0 on padding
    mm_token_type_ids: torch.Tensor  # (examples, length): 1 on image placeholders
    pixel_values: torch.Tensor  # (patches of every image, channels x patch volume)
    image_grid_thw: torch.Tensor  # (examples, 3): each example's one image's patch grid
    # Label tokens per example over the whole global batch: the loss's divisor (see above).
    loss_tokens: float

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, rows: slice) -> VLMBatch:
        patches = self.image_grid_thw.prod(-1)
        first = int(patches[: rows.start or 0].sum())
        count = int(patches[rows].sum())
        return VLMBatch(
            self.input_ids[rows], self.attention_mask[rows], self.mm_token_type_ids[rows],
            self.pixel_values[first:first + count], self.image_grid_thw[rows], self.loss_tokens)

    def to(self, device: Any) -> VLMBatch:
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        return replace(self, **{k: v.to(device) for k, v in moved.items()
                                if isinstance(v, torch.Tensor)})


class VisionLM(CausalLM):
    """A transformers Qwen2-VL model, whole (it is not cut into pipeline stages)."""

    def __init__(self, hf_model: nn.Module, pristine: nn.Module, source: Any) -> None:
        nn.Module.__init__(self)
        self.config = hf_model.config
        self.model = hf_model.model
        self.lm_head = hf_model.lm_head
        self.tied = bool(getattr(self.config, "tie_word_embeddings", False))
        object.__setattr__(self, "_pristine", pristine)
        object.__setattr__(self, "_source", source)

    def logits(self, batch: VLMBatch) -> torch.Tensor:
        out = self.model(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask,
            pixel_values=batch.pixel_values, image_grid_thw=batch.image_grid_thw,
            mm_token_type_ids=batch.mm_token_type_ids, use_cache=False)
        return self.lm_head(out.last_hidden_state)

    def forward(  # type: ignore[override]
        self, batch: VLMBatch, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = self.logits(batch)
        if labels is None:
            return logits, None
        return logits, text_loss(logits, labels, batch.loss_tokens * len(batch))

    def stage(self, layers: Sequence[int], first: bool, last: bool) -> CausalLM:
        raise ValueError("the VLM family is not cut into pipeline stages")

    def blocks(self) -> list[nn.Module]:
        """The vision tower's blocks, then the decoder layers: what FSDP shards one by one."""
        return [*self.model.visual.blocks, *self.model.language_model.layers]


def text_loss(logits: torch.Tensor, labels: torch.Tensor, divisor: float) -> torch.Tensor:
    """Next-token cross-entropy over the labelled tokens, summed, over `divisor`."""
    shifted = labels[:, 1:].reshape(-1)
    predicted = logits[:, :-1].reshape(-1, logits.shape[-1]).float()
    return F.cross_entropy(predicted, shifted, ignore_index=IGNORE, reduction="sum") / divisor


def _from_config(config: Any) -> nn.Module:
    from transformers import Qwen2VLForConditionalGeneration

    return Qwen2VLForConditionalGeneration._from_config(config, dtype=torch.float32)


def build(
    spec: ModelSpec, source: Any, context: contextlib.AbstractContextManager | None = None
) -> VisionLM:
    """The whole model on the meta device (or under `context`: ZeRO-3's zero.Init)."""
    config = spec.transformers_config()
    with torch.device("meta"):
        pristine = _from_config(config)
    if context is None:
        model = copy.deepcopy(pristine)
    else:
        with context:
            model = _from_config(config)
    return VisionLM(model, pristine, SavedNames(source))


def expected_shapes(spec: ModelSpec) -> dict[str, tuple[int, ...]]:
    model = build(spec, FreshWeights(0))
    return {saved_name(name): tuple(t.shape) for name, t in model.state_dict().items()}


def split_problems(tp: int, pp: int) -> list[str]:
    if tp > 1 or pp > 1:
        return [f"tp {tp} x pp {pp}: the VLM family (Qwen2-VL) trains with data parallelism "
                "only (single, ddp, fsdp, zero1/2/3); set tp=1 and pp=1"]
    return []
