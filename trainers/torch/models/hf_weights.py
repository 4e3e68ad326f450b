"""Where a Hugging Face model's weights come from and where they go: building the model on the
meta device, the sources `CausalLM.materialise` reads (fresh values, or safetensors files read
slice by slice), and the export that `AutoModelForCausalLM.from_pretrained` loads.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import torch

from trainers.storage import Storage
from trainers.torch.models.hf import EMBEDDING, HEAD, CausalLM
from trainers.torch.models.hf_config import (
    CONFIG_FILE,
    INDEX_FILE,
    SINGLE_FILE,
    SUPPORTED,
    ModelSpec,
    weight_files,
)

TOKENIZER_FILE = "tokenizer.json"
# Safetensors files of an export are cut at this size, as transformers' save_pretrained does.
SHARD_BYTES = 5 * 1024**3


class FreshWeights:
    """A new model: every value is transformers' initialisation, seeded per module name."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def has(self, name: str) -> bool:
        return False

    def read(self, name: str, index: tuple[slice, ...] | None) -> torch.Tensor:
        raise KeyError(name)


class SafetensorsWeights:
    """The tensors of a folder of safetensors files; each rank reads only the slices it keeps
    (`safe_open(...).get_slice`). What the files lack (non-persistent buffers) is fresh."""

    def __init__(self, folder: str, seed: int) -> None:
        self.files = weight_files(folder)
        self.seed = seed
        self.handles: dict[str, Any] = {}

    def has(self, name: str) -> bool:
        return name in self.files

    def read(self, name: str, index: tuple[slice, ...] | None) -> torch.Tensor:
        from safetensors import safe_open

        path = self.files[name]
        if path not in self.handles:
            self.handles[path] = safe_open(path, framework="pt")
        handle = self.handles[path]
        if index is None:
            return handle.get_tensor(name)
        return handle.get_slice(name)[index]


def source_for(init_from: str | None, seed: int) -> FreshWeights | SafetensorsWeights:
    return SafetensorsWeights(init_from, seed) if init_from else FreshWeights(seed)


def build(
    spec: ModelSpec,
    source: FreshWeights | SafetensorsWeights,
    context: contextlib.AbstractContextManager | None = None,
) -> CausalLM:
    """The whole model on the meta device (or under `context`, e.g. DeepSpeed's zero.Init,
    which partitions each parameter as it is made)."""
    from transformers import AutoModelForCausalLM

    config = spec.transformers_config()
    with torch.device("meta"):
        pristine = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    if context is None:
        model = copy.deepcopy(pristine)
    else:
        with context:
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return CausalLM(model, pristine, source)


def expected_shapes(spec: ModelSpec) -> dict[str, tuple[int, ...]]:
    """Every tensor the model's state dict holds, with its shape (built on the meta device)."""
    model = build(spec, FreshWeights(0))
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def export(
    storage: Storage,
    folder: str,
    weights: dict[str, torch.Tensor],
    spec: ModelSpec,
    tokenizer: str | None,
    shard_bytes: int = SHARD_BYTES,
) -> None:
    """Safetensors files (cut into shards with an index when large), the tokenizer and then
    config.json, written last: a folder with a config.json holds a complete model."""
    from safetensors.torch import save

    tied = bool(getattr(spec.transformers_config(), "tie_word_embeddings", False))
    tensors = {
        name: tensor.detach().to("cpu", torch.float32).contiguous()
        for name, tensor in sorted(weights.items())
        if not (tied and name == HEAD and EMBEDDING in weights)
    }
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name, tensor in tensors.items():
        nbytes = tensor.numel() * tensor.element_size()
        if shards[-1] and size + nbytes > shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = tensor
        size += nbytes
    storage.make_dirs(folder)
    metadata = {"format": "pt"}
    if len(shards) == 1:
        storage.replace_file(storage.join(folder, SINGLE_FILE), save(shards[0], metadata))
    else:
        weight_map = {}
        for i, shard in enumerate(shards, 1):
            file = f"model-{i:05d}-of-{len(shards):05d}.safetensors"
            storage.replace_file(storage.join(folder, file), save(shard, metadata))
            weight_map.update(dict.fromkeys(shard, file))
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        storage.replace_file(storage.join(folder, INDEX_FILE),
                             json.dumps(index, indent=2).encode())
    if tokenizer:
        from trainers.storage import storage_for

        storage.replace_file(storage.join(folder, TOKENIZER_FILE),
                             storage_for(tokenizer).read_bytes(tokenizer))
    # The tensors are float32 whatever the source's dtype; the older key would contradict it.
    # model_type too: AutoConfig reads it, and a given config.json may name only the class.
    config = {key: value for key, value in spec.values.items() if key != "torch_dtype"}
    config.update(dtype="float32", model_type=SUPPORTED[spec.architecture])
    storage.replace_file(storage.join(folder, CONFIG_FILE), json.dumps(config, indent=2).encode())
