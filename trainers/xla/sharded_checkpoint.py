"""Checkpoints of an FSDP-sharded XLA run: torch.distributed.checkpoint with torch_xla's SPMD
planners, every host writing the shards its devices hold, into the trainer's step folder
(trainers/torch/checkpoints.py commits it once every host has written).

Gathering a sharded state whole to one host (the `torch` format of a data-parallel mesh) would
move every byte of the model over the hosts' network and hold it in one host's memory, and host
0 alone would write it: too slow for a preemption notice on a large slice. A checkpoint in this
format is resumed by an XLA run with the same model; the planners lay the shards out for the
resuming run's own mesh.
"""

from __future__ import annotations

from typing import Any

import torch.distributed.checkpoint as dcp
from torch import nn
from torch_xla.experimental.distributed_checkpoint import SPMDLoadPlanner, SPMDSavePlanner
from torch_xla.experimental.distributed_checkpoint.util import prime_optimizer

from trainers.storage import Storage

FORMAT = "xla_dcp"
DCP_FOLDER = "dcp"


def save(storage: Storage, folder: str, model: nn.Module, optimizer: Any) -> None:
    """Every host calls this; each writes its devices' shards (replicated ones once)."""
    dcp.save(_state(model, optimizer),
             storage_writer=_writer(storage, storage.join(folder, DCP_FOLDER)),
             planner=SPMDSavePlanner())


def load(storage: Storage, folder: str, model: nn.Module, optimizer: Any) -> None:
    """Into the model's and optimizer's own sharded tensors, in place (every host)."""
    # The optimizer's state is made only by its first step; loading fills existing tensors.
    # The dummy step's changes to the parameters are overwritten by the load.
    prime_optimizer(optimizer)
    state = _state(model, optimizer)
    dcp.load(state, storage_reader=_reader(storage, storage.join(folder, DCP_FOLDER)),
             planner=SPMDLoadPlanner())
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])


def _state(model: nn.Module, optimizer: Any) -> dict[str, Any]:
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict()}


def _writer(storage: Storage, path: str) -> dcp.StorageWriter:
    if storage.local:
        return dcp.FileSystemWriter(path)  # fsyncs each file: the COMMITTED marker comes after
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecWriter

    return FsspecWriter(path)


def _reader(storage: Storage, path: str) -> dcp.StorageReader:
    if storage.local:
        return dcp.FileSystemReader(path)
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader

    return FsspecReader(path)
