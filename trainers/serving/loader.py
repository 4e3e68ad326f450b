"""Loading a model to serve from what training wrote: the exported model folder (AIP_MODEL_DIR:
`model.pt` + `config.json`) or one committed checkpoint (`step-NNNNNNNN/` with its COMMITTED
marker), on a local path or gs://.

Checkpoints in the `torch` format (ddp, single) hold the whole model in one file; sharded ones
(FSDP's and tensor/pipeline parallel runs' dcp/, DeepSpeed ZeRO's deepspeed/) are consolidated
into the whole model's weights as they load (`consolidate.py`), so every committed checkpoint
of every strategy can be served, not only a run's final export.

A Hugging Face export (config.json naming its `architectures`, safetensors and tokenizer.json:
what `--export-hf` writes) in the same folder contract is served with its tokenizer
(hf_loader.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import torch

from trainers.checkpoint import MARKER, read_marker
from trainers.config import ModelConfig
from trainers.serving import consolidate, hf_loader
from trainers.serving.codec import BYTES, Codec
from trainers.storage import Storage, storage_for
from trainers.torch.model import GPT

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.pt"


class ModelLoadError(Exception):
    """The folder holds no model this server can load; the message says why."""


@dataclass(frozen=True)
class LoadedModel:
    model: GPT  # or a Hugging Face export's hf_model.ServedLM
    config: ModelConfig | None  # the GPT's (None for a Hugging Face export)
    source: str  # the folder it came from
    step: int | None  # the training step of the weights, when known
    params: int
    codec: Codec = BYTES  # text to tokens and back
    chat_template: str | None = None  # the export's own (Jinja), where it has one
    special_tokens: dict[str, str] = field(default_factory=dict)  # what a template reads
    architecture: str = "gpt"  # config.json's architecture for an export


def load(folder: str, device: str = "cpu", dtype: str = "auto",
         max_model_len: int | None = None) -> LoadedModel:
    """The model in `folder`; `dtype` and `max_model_len` (its context) apply to a Hugging
    Face export only (the GPT is served as trained)."""
    storage = storage_for(folder)
    folder = folder.rstrip("/") or folder
    if hf_loader.is_export(storage, folder):
        try:
            hf = hf_loader.load(folder, device, dtype, max_model_len)
        except hf_loader.HFLoadError as exc:
            raise ModelLoadError(str(exc)) from None
        return LoadedModel(hf.model, None, folder, None, hf.params, hf.codec,  # type: ignore[arg-type]
                           hf.chat_template, hf.special_tokens, hf.architecture)
    step = None
    found = "torch"
    if storage.exists(storage.join(folder, MARKER)):
        metadata = read_marker(storage, folder)
        if metadata is None:
            raise ModelLoadError(f"{folder}: the COMMITTED marker is unreadable")
        found = str(metadata.get("format", "torch"))
        step = metadata.get("step")
    config_data = _read_json(storage, storage.join(folder, CONFIG_FILE))
    model_fields = config_data.get("model")
    if not isinstance(model_fields, dict):
        raise ModelLoadError(f"{folder}/{CONFIG_FILE} has no 'model' object")
    try:
        config = ModelConfig(**model_fields)
    except TypeError as exc:
        raise ModelLoadError(f"{folder}/{CONFIG_FILE}: {exc}") from exc
    if step is None and isinstance(config_data.get("step"), int):
        step = config_data["step"]
    if found == "torch":
        weights_path = storage.join(folder, WEIGHTS_FILE)
        if not storage.exists(weights_path):
            raise ModelLoadError(f"{folder} has no {WEIGHTS_FILE}")
        with storage.open_read(weights_path) as f:
            state = torch.load(f, map_location=device, weights_only=True)
    else:
        weights_path = folder
        try:
            state = consolidate.full_state_dict(storage, folder, found, config)
        except consolidate.ConsolidationError as exc:
            raise ModelLoadError(str(exc)) from exc
    # Dropout off and no training-time behaviour: the seed only shapes weights load replaces.
    model = GPT(config, seed=0)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ModelLoadError(f"{weights_path} does not fit the config: {exc}") from exc
    model.to(device).eval()
    return LoadedModel(model, config, folder, step, model.num_parameters())


def require_gpt(loaded: LoadedModel, what: str) -> LoadedModel:
    """`loaded` where it is the byte-level GPT, which `what` (a runtime, a package) is made
    for; a ModelLoadError saying so for a Hugging Face export."""
    if loaded.config is None:
        raise ModelLoadError(
            f"{what}: made for the byte-level GPT; {loaded.source} is a Hugging Face export "
            f"({loaded.architecture}), served by the eager runtime or by vLLM")
    return loaded


def _read_json(storage: Storage, path: str) -> dict[str, Any]:
    if not storage.exists(path):
        raise ModelLoadError(f"{path} not found")
    try:
        value = json.loads(storage.read_bytes(path))
    except ValueError as exc:
        raise ModelLoadError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ModelLoadError(f"{path} is not a JSON object")
    return value
