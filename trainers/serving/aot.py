"""The ``aot`` runtime: the model compiled ahead of time by AOTInductor into a package (a .pt2
file of generated kernels and weights) that a server loads in milliseconds.

The package is built once per model folder, torch version and device, and stored beside the
weights (``aoti/``). A model registered with the aot runtime has its CPU package built before
it is uploaded, by a packaging job in the serving image (``aot_package.py``: the same image,
so the same torch, as the replicas that load it). A replica on another device (a GPU) finds
no package for it, builds one at its first start and stores it; every later replica (a
scale-out, a restart, a redeploy) loads it instead of compiling. A package is only used if it
answers as the weights beside it do (checked on a fixed input at load), so a stale or foreign
package is rebuilt, never served. Where the folder cannot be written (a read-only bucket:
Vertex hands a replica a copy of the model's artifacts, and whether a replica may write to
that copy is not documented), the package built at start serves this replica and the next one
builds again.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from trainers.storage import Storage, StorageError
from trainers.torch.model import GPT

PACKAGE_FOLDER = "aoti"
# The batch sizes a package accepts (the batcher's --max-batch must fit).
MAX_BATCH = 256
_CHECK_TOLERANCE = 1e-4


class PackagedGPT(nn.Module):
    """An AOTInductor package behind GPT's call: idx -> (logits, None), with its config."""

    def __init__(self, runner: Callable[..., Any], config: Any, device: torch.device) -> None:
        super().__init__()
        self.runner = runner
        self.config = config
        self.device = device

    def forward(self, idx: torch.Tensor, targets: None = None) -> tuple[torch.Tensor, None]:
        return self.runner(idx), None


class _Logits(nn.Module):
    """What is exported: tokens to logits, the whole model's stage_forward."""

    def __init__(self, model: GPT) -> None:
        super().__init__()
        self.model = model

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.model.stage_forward(idx)


def package_path(storage: Storage, folder: str, device: torch.device) -> str:
    version = re.sub(r"[^A-Za-z0-9.]+", "_", torch.__version__)
    return storage.join(folder, PACKAGE_FOLDER, f"gpt-torch{version}-{device.type}.pt2")


def load_or_build(model: GPT, storage: Storage, folder: str, max_batch: int,
                  log: Callable[[str], None]) -> tuple[PackagedGPT, bool]:
    """The model as a package, and whether it had to be built (False: loaded)."""
    device = next(model.parameters()).device
    path = package_path(storage, folder, device)
    if storage.exists(path):
        stored = load_stored(model, storage, path)
        if stored is not None:
            log(f"loaded the AOTInductor package {path}")
            return stored, False
        log(f"{path} does not answer as the weights beside it: rebuilding it")
    with tempfile.TemporaryDirectory(prefix="aoti-") as scratch:
        local = os.path.join(scratch, "model.pt2")
        _build(model, local, max_batch)
        packaged = _load(local, model, device)
        try:
            _store(local, storage, folder, path)
            log(f"built and stored the AOTInductor package {path}")
        except (OSError, StorageError) as exc:
            log(f"built the AOTInductor package; cannot store it at {path} ({exc}): the "
                "next replica builds it again")
    return packaged, True


def load_stored(model: GPT, storage: Storage, path: str) -> PackagedGPT | None:
    """The package stored at ``path``, or None where it does not answer as ``model`` does."""
    device = next(model.parameters()).device
    with tempfile.TemporaryDirectory(prefix="aoti-") as scratch:
        local = os.path.join(scratch, "model.pt2")
        with storage.open_read(path) as src, open(local, "wb") as dst:
            dst.write(src.read())
        packaged = _load(local, model, device)
    return packaged if _answers_as(packaged, model) else None


def build_and_store(model: GPT, storage: Storage, folder: str,
                    max_batch: int = MAX_BATCH) -> str:
    """Build the model's package for its device, check that it answers as the model does, and
    store it beside the weights (a packaging job); its path. StorageError or OSError where it
    cannot be stored, PackageMismatch where the package does not answer as the weights."""
    device = next(model.parameters()).device
    path = package_path(storage, folder, device)
    with tempfile.TemporaryDirectory(prefix="aoti-") as scratch:
        local = os.path.join(scratch, "model.pt2")
        _build(model, local, max_batch)
        if not _answers_as(_load(local, model, device), model):
            raise PackageMismatch(f"the package built for {folder} does not answer as its "
                                  f"weights do (tolerance {_CHECK_TOLERANCE})")
        _store(local, storage, folder, path)
    return path


class PackageMismatch(RuntimeError):
    """A freshly built package answers otherwise than the model it was built from."""


def _store(local: str, storage: Storage, folder: str, path: str) -> None:
    storage.make_dirs(storage.join(folder, PACKAGE_FOLDER))
    with open(local, "rb") as f:
        storage.replace_file(path, f.read())


def _build(model: GPT, local: str, max_batch: int) -> None:
    from torch.export import Dim

    batch = Dim("batch", min=1, max=max(MAX_BATCH, max_batch))
    width = Dim("width", min=1, max=model.config.block_size)
    example = torch.zeros((2, 8), dtype=torch.long, device=next(model.parameters()).device)
    with torch.inference_mode():
        exported = torch.export.export(_Logits(model).eval(), (example,),
                                       dynamic_shapes={"idx": {0: batch, 1: width}})
        torch._inductor.aoti_compile_and_package(exported, package_path=local)


def _load(local: str, model: GPT, device: torch.device) -> PackagedGPT:
    runner = torch._inductor.aoti_load_package(local)
    return PackagedGPT(runner, model.config, device)


@torch.inference_mode()
def _answers_as(packaged: PackagedGPT, model: GPT) -> bool:
    device = packaged.device
    probe = (torch.arange(3 * 11, device=device) % model.config.vocab_size).reshape(3, 11)
    try:
        got, _ = packaged(probe)
    except RuntimeError:
        return False  # built for other shapes or weights layout
    want = model.stage_forward(probe)
    return got.shape == want.shape and bool(
        torch.allclose(got, want, atol=_CHECK_TOLERANCE, rtol=_CHECK_TOLERANCE))
