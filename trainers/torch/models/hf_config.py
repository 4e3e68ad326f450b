"""Reading and checking what a Hugging Face model run is given, before any process group exists:
the model's config.json, the weights to start from and the tokenizer.

`--model-config` takes a path or the name of a shape shipped in shapes/ (`llama-3-8b`,
`llama-3-70b`, `qwen3-8b`, `gemma-2b`): the published config.json of that model, so a preset
can train a real architecture at its real size without a file of the user's.

Each check fails with one ValueError that names the file and the key or tensor at fault, so the
run ends with exit 2 and one error event before anything is written (trainers/cli.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from contract import hf_models
from trainers.storage import StorageError, storage_for

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
SHAPES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes")
# The architectures (config.json "architectures") this trainer builds, and their model_type.
SUPPORTED = {
    **hf_models.DECODERS,
    # The VLM family (vlm.py): image + text pairs (--vlm-data), data parallelism only.
    "Qwen2VLForConditionalGeneration": "qwen2_vl",
}
REQUIRED_KEYS = hf_models.REQUIRED_KEYS


@dataclass(frozen=True)
class ModelSpec:
    """A checked config.json: where it came from and its values."""

    path: str
    values: dict[str, Any]

    @property
    def architecture(self) -> str:
        return self.values["architectures"][0]

    @property
    def n_layer(self) -> int:
        return self.values["num_hidden_layers"]

    @property
    def n_head(self) -> int:
        return self.values["num_attention_heads"]

    @property
    def n_kv_head(self) -> int:
        return self.values.get("num_key_value_heads") or self.n_head

    @property
    def vocab_size(self) -> int:
        return self.values["vocab_size"]

    @property
    def hidden_size(self) -> int:
        return self.values["hidden_size"]

    def sliding_window(self) -> int | None:
        """The attention window when it applies (Mistral's always; Qwen's when enabled)."""
        window = self.values.get("sliding_window")
        if "use_sliding_window" in self.values and not self.values["use_sliding_window"]:
            return None
        return window or None

    def transformers_config(self) -> Any:
        """transformers' config object of this architecture, with SDPA attention."""
        from transformers import CONFIG_MAPPING

        config = CONFIG_MAPPING[SUPPORTED[self.architecture]].from_dict(dict(self.values))
        config._attn_implementation = "sdpa"
        return config


def shape_names() -> list[str]:
    """The model shapes shipped with the trainer (shapes/NAME.json)."""
    return sorted(f[: -len(".json")] for f in os.listdir(SHAPES_DIR) if f.endswith(".json"))


def resolve_config(name_or_path: str) -> str:
    """A shipped shape's name as its config.json; anything else (a path, gs://) as it is. A
    bare name that is neither a shape nor a file is refused with the shapes' names."""
    if "/" in name_or_path or name_or_path.endswith(".json") or os.path.exists(name_or_path):
        return name_or_path
    if name_or_path in shape_names():
        return os.path.join(SHAPES_DIR, f"{name_or_path}.json")
    raise ValueError(
        f"model config {name_or_path}: neither a file nor a shipped model shape "
        f"({', '.join(shape_names())})")


def read_spec(path: str) -> ModelSpec:
    """The config.json at `path` (local or gs://, or a shipped shape's name), checked for what
    the trainer needs."""
    path = resolve_config(path)
    try:
        raw = storage_for(path).read_bytes(path)
    except (OSError, StorageError) as exc:
        raise ValueError(f"model config {path}: cannot be read: {exc}") from None
    try:
        values = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"model config {path}: not JSON: {exc}") from None
    if not isinstance(values, dict):
        raise ValueError(f"model config {path}: expected a JSON object")
    values = flat(values)
    for key in REQUIRED_KEYS:
        if key not in values:
            raise ValueError(f"model config {path}: the required key {key!r} is missing")
    architectures = values["architectures"]
    if not (isinstance(architectures, list) and len(architectures) == 1):
        raise ValueError(
            f"model config {path}: key 'architectures' must list one architecture, "
            f"not {architectures!r}")
    if architectures[0] not in SUPPORTED:
        raise ValueError(
            f"model config {path}: key 'architectures' names {architectures[0]!r}, which this "
            f"trainer does not build; supported: {', '.join(SUPPORTED)}")
    for key in REQUIRED_KEYS[1:]:
        if not (isinstance(values[key], int) and values[key] > 0):
            raise ValueError(
                f"model config {path}: key {key!r} must be a positive integer, "
                f"not {values[key]!r}")
    return ModelSpec(path, values)


def flat(values: dict[str, Any]) -> dict[str, Any]:
    """A multimodal config as its published flat form: transformers 5 saves the decoder's keys
    under "text_config", and reads them from the top level too (a VLM's vision_config stays)."""
    text = values.get("text_config")
    if not isinstance(text, dict):
        return values
    outer = {k: v for k, v in values.items() if k != "text_config"}
    return {**{k: v for k, v in text.items() if k not in ("model_type", "dtype")}, **outer}


def spec_for(model_config: str | None, init_from: str | None) -> ModelSpec:
    """--model-config's file, else the config.json beside the --init-from weights."""
    if model_config:
        return read_spec(model_config)
    assert init_from
    return read_spec(os.path.join(init_from, CONFIG_FILE))


def weight_files(folder: str) -> dict[str, str]:
    """Tensor name -> the safetensors file (a path) that holds it, from the index when there
    is one, else the single model.safetensors. Every file named must exist."""
    from safetensors import safe_open

    if not os.path.isdir(folder):
        raise ValueError(f"init-from {folder}: not a directory of safetensors weights")
    index_path = os.path.join(folder, INDEX_FILE)
    if os.path.exists(index_path):
        try:
            with open(index_path) as f:
                weight_map = json.load(f)["weight_map"]
        except (ValueError, KeyError) as exc:
            raise ValueError(
                f"weights index {index_path}: no readable 'weight_map' ({exc})") from None
        for file in sorted(set(weight_map.values())):
            if not os.path.exists(os.path.join(folder, file)):
                raise ValueError(
                    f"weights index {index_path}: shard file {file!r} is missing from {folder}")
        return {name: os.path.join(folder, file) for name, file in weight_map.items()}
    single = os.path.join(folder, SINGLE_FILE)
    if not os.path.exists(single):
        raise ValueError(f"init-from {folder}: neither {INDEX_FILE} nor {SINGLE_FILE} is there")
    with safe_open(single, framework="pt") as f:
        return dict.fromkeys(f.keys(), single)


def check_weights(folder: str, expected: dict[str, tuple[int, ...]], tied: bool) -> None:
    """Every tensor the model has is in the files with the model's shape (a tied model's head
    is its embedding, which transformers saves once)."""
    from safetensors import safe_open

    files = weight_files(folder)
    shapes: dict[str, tuple[int, ...]] = {}
    for file in sorted(set(files.values())):
        with safe_open(file, framework="pt") as f:
            for name in f.keys():  # noqa: SIM118 (a safetensors handle, not a dict)
                shapes[name] = tuple(f.get_slice(name).get_shape())
    for name, shape in expected.items():
        if tied and name == "lm_head.weight":
            continue
        if name not in shapes:
            raise ValueError(
                f"init-from {folder}: tensor {name!r} (shape {list(shape)}) that the model "
                "config needs is in no safetensors file")
        if shapes[name] != shape:
            raise ValueError(
                f"init-from {folder}: tensor {name!r} has shape {list(shapes[name])} in "
                f"{os.path.basename(files[name])}, but the model config makes it {list(shape)}")


def read_tokenizer(path: str) -> Any:
    """A `tokenizers` tokenizer from a tokenizer.json (local or gs://)."""
    from tokenizers import Tokenizer

    try:
        raw = storage_for(path).read_bytes(path)
        return Tokenizer.from_str(raw.decode())
    except (OSError, StorageError, UnicodeDecodeError) as exc:
        raise ValueError(f"tokenizer {path}: cannot be read: {exc}") from None
    except Exception as exc:  # tokenizers raises its own Exception for a malformed file
        raise ValueError(f"tokenizer {path}: not a tokenizer.json: {exc}") from None


def check_tokenizer(path: str, spec: ModelSpec) -> None:
    size = read_tokenizer(path).get_vocab_size(with_added_tokens=True)
    if size > spec.vocab_size:
        raise ValueError(
            f"tokenizer {path}: its vocabulary has {size} tokens, more than the key "
            f"'vocab_size' {spec.vocab_size} of model config {spec.path}: token ids would "
            "fall outside the embedding")
