"""What the control plane can see of a Hugging Face model folder before it registers it: its
config.json (a supported architecture, the keys serving needs), its weights (model.safetensors,
or model.safetensors.index.json and every shard it lists) and its tokenizer. Pure: the caller
reads the files (bounded) and says which exist; each refusal names the file and the key.

The architectures are the decoder LMs the product's trainers build and export with --export-hf
(contract/hf_models.py, which the trainers' hf_config.py shares; the VLM the trainers also build
is not served) and that vLLM serves. The parameter count is computed from the config as
transformers' modeling files lay the layers out (tests/vertexplan/test_serving_vllm.py holds
it to counts transformers gave; the serving stack test to transformers' own, live); it sizes
the fit check (serving_vllm.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contract import hf_models
from vertexplan.serving_vllm import ModelFacts

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
# One of these makes a tokenizer: the `tokenizers` file the trainers export, or a
# sentencepiece model as many published checkpoints ship.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")
CONFIG_LIMIT = 256 * 1024  # a config.json is a few kB; more is no config of these
INDEX_LIMIT = 8 * 1024 * 1024  # a 405B model's index is ~100 kB
# Each shard the index lists costs one storage request before the folder is registered: a
# 405B model has 191 shards; an index naming thousands is no model's, only a bill.
MAX_SHARDS = 1024

SUPPORTED = hf_models.DECODERS  # the trainers' own, less the VLM (not served)
# The serving side needs the context length too (the fit check, max_model_len's default).
REQUIRED_KEYS = (*hf_models.REQUIRED_KEYS, "max_position_embeddings")
# transformers' defaults where a config leaves the key out.
TIED_BY_DEFAULT = frozenset({"gemma"})
QKV_BIAS = frozenset({"qwen2"})  # Qwen2's q/k/v projections always have a bias
QK_NORM = frozenset({"qwen3"})  # Qwen3 normalises queries and keys per head


class ExportRefused(ValueError):
    """The folder cannot be served; the message names the file and the key."""


@dataclass(frozen=True)
class HfExport:
    facts: ModelFacts
    model_type: str
    weight_files: tuple[str, ...]
    tokenizer_file: str

    def as_dict(self) -> dict[str, Any]:
        """What the registry keeps of it (ModelEntry.hf_facts)."""
        f = self.facts
        return {"architecture": f.architecture, "model_type": self.model_type,
                "parameters": f.parameters, "layers": f.layers,
                "attention_heads": f.attention_heads, "kv_heads": f.kv_heads,
                "head_dim": f.head_dim, "max_position_embeddings": f.max_position_embeddings,
                "config_dtype": f.config_dtype, "weight_files": list(self.weight_files),
                "tokenizer_file": self.tokenizer_file}


def facts_from(stored: dict[str, Any]) -> ModelFacts:
    """ModelFacts from what as_dict kept."""
    return ModelFacts(**{k: stored[k] for k in (
        "architecture", "parameters", "layers", "attention_heads", "kv_heads", "head_dim",
        "max_position_embeddings", "config_dtype")})


def read_config(raw: bytes | None, folder: str) -> tuple[ModelFacts, str]:
    """(facts, model_type) of config.json's bytes (None: missing or over CONFIG_LIMIT)."""
    where = f"{folder}/{CONFIG_FILE}"
    if raw is None:
        raise ExportRefused(f"{where}: missing, or larger than {CONFIG_LIMIT // 1024} kB: a "
                            "Hugging Face model folder holds its config.json")
    try:
        values = json.loads(raw)
    except ValueError as exc:
        raise ExportRefused(f"{where}: not JSON ({exc})") from None
    if not isinstance(values, dict):
        raise ExportRefused(f"{where}: expected a JSON object")
    for key in REQUIRED_KEYS:
        if key not in values:
            raise ExportRefused(f"{where}: the required key {key!r} is missing")
    architectures = values["architectures"]
    if not (isinstance(architectures, list) and len(architectures) == 1):
        raise ExportRefused(f"{where}: key 'architectures' must list one architecture, not "
                            f"{architectures!r}")
    architecture = architectures[0]
    if architecture not in SUPPORTED:
        raise ExportRefused(f"{where}: key 'architectures' names {architecture!r}, which is not "
                            f"served; supported: {', '.join(SUPPORTED)}")
    for key in REQUIRED_KEYS[1:]:
        _positive(values, key, where)
    heads = values["num_attention_heads"]
    kv_heads = values.get("num_key_value_heads") or heads
    _positive({"num_key_value_heads": kv_heads}, "num_key_value_heads", where)
    if heads % kv_heads:
        raise ExportRefused(f"{where}: key 'num_key_value_heads' {kv_heads} must divide "
                            f"num_attention_heads {heads}")
    head_dim = values.get("head_dim") or values["hidden_size"] // heads
    _positive({"head_dim": head_dim}, "head_dim", where)
    model_type = SUPPORTED[architecture]
    dtype = values.get("dtype") or values.get("torch_dtype") or "float32"
    facts = ModelFacts(
        architecture=architecture, parameters=parameter_count(values, model_type, head_dim,
                                                               kv_heads),
        layers=values["num_hidden_layers"], attention_heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, max_position_embeddings=values["max_position_embeddings"],
        config_dtype=str(dtype))
    return facts, model_type


def _positive(values: dict[str, Any], key: str, where: str) -> None:
    value = values[key]
    if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        raise ExportRefused(f"{where}: key {key!r} must be a positive integer, not {value!r}")


def parameter_count(values: dict[str, Any], model_type: str, head_dim: int,
                    kv_heads: int) -> int:
    """Parameters of the model transformers builds from this config."""
    h, inner = values["hidden_size"], values["intermediate_size"]
    vocab, heads = values["vocab_size"], values["num_attention_heads"]
    q, kv = heads * head_dim, kv_heads * head_dim
    attention = h * q + 2 * h * kv + q * h
    if values.get("attention_bias") or model_type in QKV_BIAS:
        attention += q + 2 * kv
        if values.get("attention_bias"):  # Llama's (and Qwen3's) bias covers o_proj too
            attention += h
    if model_type in QK_NORM:
        attention += 2 * head_dim
    mlp = 3 * h * inner + (2 * inner + h if values.get("mlp_bias") else 0)
    block = attention + mlp + 2 * h  # two RMSNorms
    tied = values.get("tie_word_embeddings", model_type in TIED_BY_DEFAULT)
    return vocab * h + values["num_hidden_layers"] * block + h + (0 if tied else vocab * h)


def read_weights(index_raw: bytes | None, exists: Callable[[str], bool],
                 folder: str) -> tuple[str, ...]:
    """The safetensors files: every shard the index lists (each must exist), else the single
    model.safetensors. `index_raw`: the index's bytes, None when there is none."""
    if index_raw is None:
        if exists(INDEX_FILE):
            raise ExportRefused(f"{folder}/{INDEX_FILE}: larger than "
                                f"{INDEX_LIMIT // (1024 * 1024)} MB, no index of these models")
        if not exists(SINGLE_FILE):
            raise ExportRefused(f"{folder}: neither {INDEX_FILE} nor {SINGLE_FILE} is there: "
                                "the weights must be safetensors")
        return (SINGLE_FILE,)
    where = f"{folder}/{INDEX_FILE}"
    try:
        weight_map = json.loads(index_raw)["weight_map"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ExportRefused(f"{where}: no readable key 'weight_map' ({exc})") from None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ExportRefused(f"{where}: key 'weight_map' must map tensor names to shard files")
    shards = sorted({str(file) for file in weight_map.values()})
    if len(shards) > MAX_SHARDS:
        raise ExportRefused(f"{where}: key 'weight_map' lists {len(shards)} shard files, more "
                            f"than the {MAX_SHARDS} any model of these has")
    for shard in shards:
        if "/" in shard or not shard.endswith(".safetensors"):
            raise ExportRefused(f"{where}: key 'weight_map' names {shard!r}, not a "
                                ".safetensors file beside the index")
        if not exists(shard):
            raise ExportRefused(f"{where}: key 'weight_map' lists shard {shard!r}, which is "
                                f"missing from {folder}")
    return tuple(shards)


def read_tokenizer(exists: Callable[[str], bool], folder: str) -> str:
    for name in TOKENIZER_FILES:
        if exists(name):
            return name
    raise ExportRefused(f"{folder}: no tokenizer ({' or '.join(TOKENIZER_FILES)}): the server "
                        "needs it to read prompts and write text")
