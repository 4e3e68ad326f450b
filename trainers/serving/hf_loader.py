"""Loading a Hugging Face export to serve: what `--export-hf` writes (and what
`save_pretrained` writes): config.json naming its architecture, model.safetensors or shards
with model.safetensors.index.json, and tokenizer.json.

The folder is checked as the trainers check `--init-from` (hf_config.py: the config's keys,
every tensor with the config's shape, a tokenizer that fits the vocabulary); each failure is
one ModelLoadError naming the file and the key. The weights load into the trainers' own
model (transformers' modules), in float32 unless a dtype is asked for.

Beside them the export may carry generation_config.json (its eos_token_id ends a generation,
else config.json's) and a chat template (chat_template.jinja, or tokenizer_config.json's
"chat_template", as transformers saves them); without one a chat is laid out as the
byte-level model lays it out (openai_api.chat_prompt).

A folder on gs:// is copied to a local temporary folder first (safetensors maps local files).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import torch

from trainers.serving.codec import TokenizerCodec
from trainers.serving.hf_model import ServedLM
from trainers.storage import Storage, StorageError, storage_for
from trainers.torch.models import hf_config, hf_weights

TOKENIZER_FILE = "tokenizer.json"
GENERATION_CONFIG = "generation_config.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
DTYPES = {"auto": None, "float32": torch.float32, "float": torch.float32,
          "bfloat16": torch.bfloat16, "float16": torch.float16, "half": torch.float16}
VLM = "qwen2_vl"  # the trainers' VLM family takes images: not a text server's model


class HFLoadError(Exception):
    """The export cannot be served; the message names the file and the key."""


@dataclass(frozen=True)
class LoadedHF:
    model: ServedLM
    codec: TokenizerCodec
    chat_template: str | None
    special_tokens: dict[str, str]  # bos_token, eos_token for the template
    architecture: str
    params: int


def is_export(storage: Storage, folder: str) -> bool:
    """Whether `folder` holds a Hugging Face export (its config.json names architectures)."""
    path = storage.join(folder, hf_config.CONFIG_FILE)
    if not storage.exists(path):
        return False
    try:
        values = json.loads(storage.read_bytes(path))
    except ValueError:
        return False
    return isinstance(values, dict) and "architectures" in values


def load(folder: str, device: str, dtype: str = "auto",
         max_model_len: int | None = None) -> LoadedHF:
    storage = storage_for(folder)
    if storage.local:
        return _load_local(folder, device, dtype, max_model_len)
    with tempfile.TemporaryDirectory(prefix="hf-export-") as local:
        try:
            storage.get_tree(folder, local)
        except (OSError, StorageError) as exc:
            raise HFLoadError(f"{folder}: cannot be copied to the replica: {exc}") from None
        return _load_local(local, device, dtype, max_model_len)


def _load_local(folder: str, device: str, dtype: str, max_model_len: int | None) -> LoadedHF:
    try:
        spec = hf_config.read_spec(os.path.join(folder, hf_config.CONFIG_FILE))
        if hf_config.SUPPORTED[spec.architecture] == VLM:
            raise ValueError(f"model config {spec.path}: key 'architectures' names "
                             f"{spec.architecture}, a vision-language model; this server "
                             "serves text-only causal LMs")
        tied = bool(getattr(spec.transformers_config(), "tie_word_embeddings", False))
        hf_config.check_weights(folder, hf_weights.expected_shapes(spec), tied)
        tokenizer_path = os.path.join(folder, TOKENIZER_FILE)
        if not os.path.exists(tokenizer_path):
            raise ValueError(f"{folder}: no {TOKENIZER_FILE}: a Hugging Face export is served "
                             "with its own tokenizer")
        hf_config.check_tokenizer(tokenizer_path, spec)
        tokenizer = hf_config.read_tokenizer(tokenizer_path)
    except ValueError as exc:
        raise HFLoadError(str(exc)) from None
    if dtype not in DTYPES:
        raise HFLoadError(f"dtype {dtype!r}: one of {', '.join(DTYPES)}")
    context = _context(spec, max_model_len)
    lm = hf_weights.build(spec, hf_weights.SafetensorsWeights(folder, seed=0))
    lm.materialise(device)
    if DTYPES[dtype] is not None:
        lm.to(DTYPES[dtype])
    model = ServedLM(lm.eval(), context, spec.sliding_window())
    tokenizer_config = _json(folder, TOKENIZER_CONFIG)
    codec = TokenizerCodec(tokenizer, context, _eos(folder, spec))
    return LoadedHF(model, codec, _chat_template(folder, tokenizer_config),
                    _special_tokens(tokenizer_config), spec.architecture,
                    model.num_parameters())


def _context(spec: hf_config.ModelSpec, max_model_len: int | None) -> int:
    limit = spec.values.get("max_position_embeddings")
    if not (isinstance(limit, int) and limit > 1):
        raise HFLoadError(f"model config {spec.path}: the key 'max_position_embeddings' must be "
                          f"an integer over 1, not {limit!r}")
    if max_model_len is None:
        return limit
    if not 1 < max_model_len <= limit:
        raise HFLoadError(f"max-model-len {max_model_len}: from 2 to the model's "
                          f"max_position_embeddings {limit} ({spec.path})")
    return max_model_len


def _json(folder: str, name: str) -> dict[str, Any]:
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError) as exc:
        raise HFLoadError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(value, dict):
        raise HFLoadError(f"{path}: not a JSON object")
    return value


def _eos(folder: str, spec: hf_config.ModelSpec) -> frozenset[int]:
    """generation_config.json's eos_token_id (what generate() stops at), else config.json's."""
    generation = _json(folder, GENERATION_CONFIG)
    value = generation.get("eos_token_id", spec.values.get("eos_token_id"))
    ids = value if isinstance(value, list) else [value]
    return frozenset(i for i in ids if isinstance(i, int) and 0 <= i < spec.vocab_size)


def _chat_template(folder: str, tokenizer_config: dict[str, Any]) -> str | None:
    path = os.path.join(folder, CHAT_TEMPLATE_FILE)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    template = tokenizer_config.get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return template if isinstance(template, str) and template else None


def _special_tokens(tokenizer_config: dict[str, Any]) -> dict[str, str]:
    tokens = {}
    for name in ("bos_token", "eos_token"):
        value = tokenizer_config.get(name)
        if isinstance(value, dict):  # {"content": ..., "lstrip": ...} in older files
            value = value.get("content")
        tokens[name] = value if isinstance(value, str) else ""
    return tokens
