"""A TensorRT model repository (``tensorrt_repo.py``) built once and published where the
model's weights are, as ``triton_publish.py`` publishes the ONNX one.

In a local scratch folder: the ONNX export, its config checked with Triton's ModelConfig proto
against the graph's tensors and its logits against eager (``triton_check.py``: the engine is
built from that graph, so a wrong export is caught before the GPU minutes are spent), then the
TensorRT config checked with the same proto and the engine built. Only ``model.plan``,
``config.pbtxt`` and last the ``CHECKED`` marker are published; a repository already published
for the same config and engine settings is not built again.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from typing import Any

from trainers.serving import tensorrt_repo, triton_publish, triton_repo
from trainers.storage import storage_for
from trainers.torch.model import GPT

SIZE_KEY = "plan_bytes"


def publish(model: GPT, repository: str, name: str = "gpt",
            batching: triton_repo.Batching | None = None,
            settings: tensorrt_repo.EngineSettings | None = None) -> dict[str, Any]:
    """Build, check and publish the engine's repository unless a checked one is there; returns
    the marker's content (``reused`` says which). EngineUnavailable where TensorRT is not."""
    from trainers.serving import triton_check

    batching = batching or triton_repo.Batching()
    settings = settings or tensorrt_repo.EngineSettings()
    settings.check()
    tensorrt_repo.require_tensorrt()  # before the export: fail in seconds where it cannot build
    config = tensorrt_repo.config_text(name, model.config.vocab_size, batching)
    # The engine settings are part of what was built: another precision is another repository.
    identity = config + json.dumps({"precision": settings.precision})
    storage = storage_for(repository)
    repository = repository.rstrip("/") or repository
    folder = storage.join(repository, triton_repo.check_name(name))
    found = triton_publish.checked(storage, folder, identity, tensorrt_repo.PLAN_FILE, SIZE_KEY)
    if found is not None:
        return {**found, "model": folder, "reused": True}
    storage.remove_tree(storage.join(folder, triton_publish.MARKER))
    with tempfile.TemporaryDirectory(prefix="tensorrt-repo-") as scratch:
        local = triton_repo.write(model, scratch, name, batching,
                                  generation=False)  # the ONNX graph alone
        onnx_checked = triton_check.validate_config(local)
        max_abs_diff = triton_check.compare_with_eager(local, model)
        with open(os.path.join(local, triton_repo.CONFIG_FILE), "w", encoding="utf-8") as f:
            f.write(config)
        marker = {
            # The TensorRT config, parsed by the same proto and matched to the same graph's
            # tensors (the engine's inputs and outputs are the graph's).
            "config": triton_check.validate_config(local),
            "onnx_config": onnx_checked,
            "onnx_max_abs_diff": max_abs_diff,
            "engine": asdict(settings) | {"calibration_cache": bool(settings.calibration_cache)},
            "config_sha256": triton_publish._digest(identity.encode()),
        }
        plan = os.path.join(local, triton_repo.VERSION, tensorrt_repo.PLAN_FILE)
        tensorrt_repo.build_plan(os.path.join(local, triton_repo.VERSION, triton_repo.ONNX_FILE),
                                 plan, batching, model.config.block_size, settings)
        marker[SIZE_KEY] = os.path.getsize(plan)
        storage.make_dirs(storage.join(folder, triton_repo.VERSION))
        with open(plan, "rb") as f:
            storage.replace_file(storage.join(folder, triton_repo.VERSION,
                                              tensorrt_repo.PLAN_FILE), f.read())
        storage.replace_file(storage.join(folder, triton_repo.CONFIG_FILE), config.encode())
    storage.replace_file(storage.join(folder, triton_publish.MARKER), json.dumps(marker).encode())
    return {**marker, "model": folder, "reused": False}
