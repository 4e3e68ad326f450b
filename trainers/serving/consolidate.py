"""Whole weights from a sharded checkpoint, so any committed checkpoint can be served.

FSDP and tensor/pipeline parallel runs write torch.distributed.checkpoint shards (``dcp/``, one
file per rank, each holding its slices); DeepSpeed ZeRO writes every rank's partition of the
fp32 master weights (``deepspeed/``). A server is one process with no process group: the
shards are read here into the full model's state dict, resharded by DCP's own planner (any
number of writers, any placements) or gathered by DeepSpeed's zero_to_fp32 reader. The result
is the state dict a single-process run would have saved at that step. Nothing in a checkpoint
runs: DeepSpeed's partitions are unpickled weights-only, as every other checkpoint here is.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import torch

from trainers.config import ModelConfig
from trainers.storage import Storage
from trainers.torch.model import GPT

SHARDED_FORMATS = ("dcp", "dcp-mesh", "deepspeed")


class ConsolidationError(Exception):
    """The shards cannot be made into this model's weights; the message says why."""


def full_state_dict(storage: Storage, folder: str, found: str,
                    config: ModelConfig) -> dict[str, torch.Tensor]:
    """The whole model's weights in the checkpoint ``folder`` written in format ``found``."""
    if found in ("dcp", "dcp-mesh"):
        return _from_dcp(storage, folder, config)
    if found == "deepspeed":
        return _from_deepspeed(storage, folder)
    raise ConsolidationError(f"{folder}: no reader for {found!r} checkpoints "
                             f"(readable: torch, {', '.join(SHARDED_FORMATS)})")


def _from_dcp(storage: Storage, folder: str, config: ModelConfig) -> dict[str, torch.Tensor]:
    # Imported here: the strategies module pulls in torch.distributed's FSDP machinery, which
    # a server of single-file checkpoints never needs.
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.api import CheckpointException

    from trainers.torch.strategies.fsdp import DCP_FOLDER, dcp_reader

    # The plain model's tensors are the destination: DCP copies each saved slice into place.
    # The tied lm_head is the embedding itself, so only the embedding's key is read.
    model = GPT(config, seed=0)
    wanted = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    path = storage.join(folder, DCP_FOLDER)
    if not storage.exists(storage.join(path, ".metadata")):
        raise ConsolidationError(f"{path} holds no torch.distributed.checkpoint metadata")
    try:
        dcp.load({"model": wanted}, storage_reader=dcp_reader(storage, path), no_dist=True)
    except (CheckpointException, RuntimeError, ValueError, KeyError) as exc:
        raise ConsolidationError(f"{path} does not hold this model's weights: {exc}") from exc
    return model.state_dict()


def _from_deepspeed(storage: Storage, folder: str) -> dict[str, torch.Tensor]:
    from trainers.torch.strategies.zero import TAG as DEEPSPEED_TAG

    try:
        from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
    except ImportError as exc:
        raise ConsolidationError(
            f"{folder} is a DeepSpeed checkpoint and reading it needs deepspeed "
            "(the trainers extra)") from exc
    with tempfile.TemporaryDirectory(prefix="ds-consolidate-") as staging:
        if storage.local:
            source = folder
        else:
            storage.get_tree(storage.join(folder, DEEPSPEED_TAG),
                             os.path.join(staging, DEEPSPEED_TAG))
            source = staging
        if not os.path.isdir(os.path.join(source, DEEPSPEED_TAG)):
            raise ConsolidationError(f"{folder} has no {DEEPSPEED_TAG}/ folder")
        try:
            with _weights_only():
                state = get_fp32_state_dict_from_zero_checkpoint(source, tag=DEEPSPEED_TAG)
        except pickle.UnpicklingError as exc:
            raise ConsolidationError(
                f"{folder}: refused to read the DeepSpeed partitions: they hold objects other "
                f"than weights and DeepSpeed's own records ({str(exc)[:300]})") from exc
        except (FileNotFoundError, ValueError, KeyError) as exc:
            raise ConsolidationError(f"{folder}: DeepSpeed could not gather the "
                                     f"partitions: {exc}") from exc
    return {k: v.float() for k, v in state.items()}


# What DeepSpeed's optimizer states pickle besides tensors and plain containers: plain records,
# rebuilt from their fields (no constructor or __setstate__ of theirs runs code of the file's).
_DEEPSPEED_RECORDS = (
    ("deepspeed.runtime.zero.config", "ZeroStageEnum"),
    ("deepspeed.utils.tensor_fragment", "fragment_address"),
    ("deepspeed.runtime.fp16.loss_scaler", "LossScaler"),
)
_PATCH = threading.Lock()


class _WeightsOnlyTorch:
    """torch as DeepSpeed's zero_to_fp32 sees it, except that every torch.load is
    weights_only: a checkpoint is a team's output, and a pickle that names any other callable
    (os.system, say) is refused instead of run."""

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    @staticmethod
    def load(*args: Any, **kwargs: Any) -> Any:
        kwargs["weights_only"] = True
        records = [getattr(importlib.import_module(m), n) for m, n in _DEEPSPEED_RECORDS]
        with torch.serialization.safe_globals(records):
            return torch.load(*args, **kwargs)


@contextlib.contextmanager
def _weights_only() -> Iterator[None]:
    """zero_to_fp32 calls torch.load(weights_only=False) itself; within this block its loads
    are weights-only."""
    from deepspeed.utils import zero_to_fp32

    with _PATCH:
        original = zero_to_fp32.torch
        zero_to_fp32.torch = _WeightsOnlyTorch()  # type: ignore[assignment]
        try:
            yield
        finally:
            zero_to_fp32.torch = original
