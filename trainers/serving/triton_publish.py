"""A Triton model repository built once and published where the model's weights are (a local
folder, /gcs/... or gs://), through the trainers' Storage like every checkpoint and export.

The graph is exported and checked in a local scratch folder (the exporter, onnx and
onnxruntime read and write local files only), then copied: ``model.onnx`` first, then
``config.pbtxt``, then the ``CHECKED`` marker last. As a checkpoint counts only with its
COMMITTED marker, a repository counts only with its CHECKED marker: a packaging run killed
half-way leaves no marker, and the next run builds the repository again. A repository whose
marker is there, for the same config, is not rebuilt (the packaging job is safe to run twice).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any

from trainers.serving import triton_repo
from trainers.storage import Storage, storage_for
from trainers.torch.model import GPT

MARKER = "CHECKED"  # in the model's folder, beside config.pbtxt (Triton ignores other files)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checked(storage: Storage, folder: str, config: str, artifact: str = triton_repo.ONNX_FILE,
            size_key: str = "onnx_bytes") -> dict[str, Any] | None:
    """The marker of a repository already published and checked with this config, or None.
    ``artifact`` is the model file in the version folder (a TensorRT repository's model.plan,
    whose size the marker keeps under ``size_key``)."""
    path = storage.join(folder, MARKER)
    if not storage.exists(path):
        return None
    try:
        marker = json.loads(storage.read_bytes(path))
    except (OSError, ValueError):
        return None  # a marker cut short is no marker
    if not isinstance(marker, dict) or marker.get("config_sha256") != _digest(config.encode()):
        return None  # built with other settings: built again
    model = storage.join(folder, triton_repo.VERSION, artifact)
    if not storage.exists(model) or storage.size(model) != marker.get(size_key):
        return None
    return marker


def publish(model: GPT, repository: str, name: str = "gpt",
            batching: triton_repo.Batching | None = None) -> dict[str, Any]:
    """Write and check the repository for ``model`` under ``repository`` unless a checked one
    for the same config is there; returns the marker's content (``reused`` says which)."""
    from trainers.serving import triton_check

    batching = batching or triton_repo.Batching()
    config = triton_repo.config_text(name, model.config.vocab_size, batching)
    storage = storage_for(repository)
    repository = repository.rstrip("/") or repository
    folder = storage.join(repository, triton_repo.check_name(name))
    found = checked(storage, folder, config)
    if found is not None:
        return {**found, "model": folder, "reused": True}
    storage.remove_tree(storage.join(folder, MARKER))  # another config's: no longer true
    with tempfile.TemporaryDirectory(prefix="triton-repo-") as scratch:
        local = triton_repo.write(model, scratch, name, batching)
        marker = {
            "config": triton_check.validate_config(local),
            "max_abs_diff": triton_check.compare_with_eager(local, model),
            "config_sha256": _digest(config.encode()),
            "onnx_bytes": os.path.getsize(
                os.path.join(local, triton_repo.VERSION, triton_repo.ONNX_FILE)),
        }
        storage.make_dirs(storage.join(folder, triton_repo.VERSION))
        with open(os.path.join(local, triton_repo.VERSION, triton_repo.ONNX_FILE), "rb") as f:
            storage.replace_file(
                storage.join(folder, triton_repo.VERSION, triton_repo.ONNX_FILE), f.read())
        storage.replace_file(storage.join(folder, triton_repo.CONFIG_FILE), config.encode())
    storage.replace_file(storage.join(folder, MARKER), json.dumps(marker).encode())
    return {**marker, "model": folder, "reused": False}
