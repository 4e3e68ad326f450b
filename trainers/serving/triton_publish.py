"""A Triton model repository built once and published where the model's weights are (a local
folder, /gcs/... or gs://), through the trainers' Storage like every checkpoint and export.

The graphs are exported and checked in a local scratch folder (the exporter, onnx and
onnxruntime read and write local files only), then copied: the step and generation models
(triton_repo.py) first, then the logits model's ``model.onnx`` and ``config.pbtxt``, then the
``CHECKED`` marker last, in the logits model's folder. It covers the whole repository: its
digest is taken over every config and the generation model's code, so a repository generated
by other code is built again. As a checkpoint counts only with its COMMITTED marker, a
repository counts only with its CHECKED marker: a packaging run killed half-way leaves no
marker, and the next run builds the repository again. A repository whose marker is there, for
the same configs and code, is not rebuilt (the packaging job is safe to run twice).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any

from trainers.serving import triton_repo, triton_step
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


def fingerprint(name: str, model: GPT, batching: triton_repo.Batching) -> str:
    """What a checked repository must have been built from: every model's config and the
    generation model's files, in one text whose digest the marker keeps."""
    configs = triton_repo.texts(name, model, batching)
    parts = [configs[folder] for folder in sorted(configs)]
    for target in sorted(triton_repo.GENERATE_FILES):
        parts.append(f"{target}\n{triton_repo.generate_file(target)}")
    return "\n".join(parts)


def publish(model: GPT, repository: str, name: str = "gpt",
            batching: triton_repo.Batching | None = None) -> dict[str, Any]:
    """Write and check the repository for ``model`` under ``repository`` unless a checked one
    for the same config is there; returns the marker's content (``reused`` says which)."""
    from trainers.serving import triton_check

    batching = batching or triton_repo.Batching()
    built_from = fingerprint(name, model, batching)
    storage = storage_for(repository)
    repository = repository.rstrip("/") or repository
    folder = storage.join(repository, triton_repo.check_name(name))
    step = f"{name}{triton_step.SUFFIX}"
    found = checked(storage, folder, built_from)
    if found is not None and _has(storage, storage.join(repository, step, triton_repo.VERSION,
                                                        triton_repo.ONNX_FILE),
                                  found.get("step_onnx_bytes")):
        return {**found, "model": folder, "reused": True}
    storage.remove_tree(storage.join(folder, MARKER))  # another config's: no longer true
    with tempfile.TemporaryDirectory(prefix="triton-repo-") as scratch:
        local = triton_repo.write(model, scratch, name, batching)
        marker = {
            "config": triton_check.validate_config(local),
            "generation": triton_check.validate_generation(scratch, name),
            "max_abs_diff": triton_check.compare_with_eager(local, model),
            "step_max_abs_diff": triton_check.compare_step_with_eager(
                os.path.join(scratch, step), model),
            "config_sha256": _digest(built_from.encode()),
            "onnx_bytes": os.path.getsize(
                os.path.join(local, triton_repo.VERSION, triton_repo.ONNX_FILE)),
            "step_onnx_bytes": os.path.getsize(
                os.path.join(scratch, step, triton_repo.VERSION, triton_repo.ONNX_FILE)),
        }
        # The step and generation models first: a marker is only ever beside all of them.
        for extra in (step, f"{name}{triton_repo.GENERATE_SUFFIX}", name):
            _copy_model(storage, os.path.join(scratch, extra), storage.join(repository, extra))
    storage.replace_file(storage.join(folder, MARKER), json.dumps(marker).encode())
    return {**marker, "model": folder, "reused": False}


def _has(storage: Storage, path: str, size: Any) -> bool:
    return storage.exists(path) and storage.size(path) == size


def _copy_model(storage: Storage, local: str, target: str) -> None:
    """A model folder's version files, then its config.pbtxt."""
    storage.make_dirs(storage.join(target, triton_repo.VERSION))
    version = os.path.join(local, triton_repo.VERSION)
    for entry in sorted(os.listdir(version)):
        if entry.startswith("."):
            continue  # an exporter's scratch folder
        with open(os.path.join(version, entry), "rb") as f:
            storage.replace_file(storage.join(target, triton_repo.VERSION, entry), f.read())
    with open(os.path.join(local, triton_repo.CONFIG_FILE), "rb") as f:
        storage.replace_file(storage.join(target, triton_repo.CONFIG_FILE), f.read())
