"""FSDP with PyTorch's `fully_shard` (FSDP2), in the three modes of `FSDPConfig.mode`.

FSDP2 rather than the older `FullyShardedDataParallel` wrapper: parameters are DTensors sharded
one by one (no flat parameters), so the optimizer, gradient clipping and
torch.distributed.checkpoint work on them directly; hybrid sharding is just a 2-D device mesh;
and it is the API torchtitan builds on. FSDP1 is in maintenance in PyTorch.

- full_shard: `reshard_after_forward=True`, parameters gathered again in backward (least memory).
- shard_grad_op: `reshard_after_forward=False`, gathered once per step (ZeRO-2-like).
- hybrid_shard: a (replicate, shard) mesh: shards within `shard_size` ranks (one node's GPUs by
  default, where the links are fast), replicas across nodes, gradients all-reduced between them.

Checkpoints: torch.distributed.checkpoint, every rank writes its own shard into `dcp/` and rank
0 the metadata; they load at any world size (DCP reshards on load).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import Future

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

from trainers.storage import Storage
from trainers.torch import activation_checkpointing, models
from trainers.torch.parallel import hybrid_mesh_shape, resolve_dims
from trainers.torch.strategies.base import Strategy

DCP_FOLDER = "dcp"
WRITER_THREADS = 2


class FullyShard(Strategy):
    checkpoint_format = "dcp"
    every_rank_writes = True
    supports_async_save = True

    def setup(self, model: nn.Module) -> tuple[nn.Module, torch.optim.Optimizer]:
        wrapped, optimizer = super().setup(model)
        # Background writes run their collectives on a group of their own: the training
        # loop's collectives on the default group go on meanwhile, and DCP's asynchronous
        # save needs a CPU (gloo) group even when training uses NCCL.
        self.checkpoint_group = (
            dist.new_group(backend="gloo") if self.config.async_checkpoint else None
        )
        return wrapped, optimizer

    def wrap(self, model: nn.Module) -> nn.Module:
        """The wrapping order in one place: tensor parallelism (tp=1 here: none), activation
        checkpointing and compilation of each block (when the config asks), then FSDP: each
        transformer block, then the root, which holds the embeddings and the tied output
        head."""
        activation_checkpointing.apply(
            model, self.config.activation_checkpointing, self.config.compile_blocks)
        mesh = self._mesh()
        reshard = self.config.fsdp.mode != "shard_grad_op"
        policy = (
            MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            if self.config.precision == "bf16"
            else MixedPrecisionPolicy()
        )
        for block in models.transformer_blocks(model):
            fully_shard(block, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
        fully_shard(model, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
        # A model built on the meta device gets only this rank's shards of its weights.
        models.materialise(model, self.device)
        return model

    def _mesh(self) -> DeviceMesh:
        device_type = torch.device(self.device).type
        dims = resolve_dims(self.config.dp, self.config.tp, self.config.pp, self.process.world_size)
        if self.config.fsdp.mode != "hybrid_shard":
            return init_device_mesh(device_type, (dims.dp,), mesh_dim_names=("shard",))
        shape = hybrid_mesh_shape(
            dims.dp, self.config.fsdp.shard_size, self.process.local_world_size
        )
        return init_device_mesh(device_type, shape, mesh_dim_names=("replicate", "shard"))

    def autocast(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()  # bf16 comes from the MixedPrecisionPolicy

    @contextlib.contextmanager
    def accumulating(self, wrapped: nn.Module) -> Iterator[None]:
        wrapped.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            wrapped.set_requires_gradient_sync(True)

    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        dcp.save(
            self._state(wrapped, optimizer),
            storage_writer=dcp_writer(storage, storage.join(folder, DCP_FOLDER)),
        )

    def save_async(
        self, storage: Storage, folder: str, wrapped: nn.Module, optimizer
    ) -> Future[None]:
        # DCP copies the shards to CPU memory before returning, then writes on a thread.
        return dcp.async_save(
            self._state(wrapped, optimizer),
            storage_writer=dcp_writer(storage, storage.join(folder, DCP_FOLDER)),
            process_group=self.checkpoint_group,
        )

    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        state = self._state(wrapped, optimizer)
        dcp.load(state, storage_reader=dcp_reader(storage, storage.join(folder, DCP_FOLDER)))
        set_state_dict(
            wrapped,
            optimizer,
            model_state_dict=state["model"],
            optim_state_dict=state["optimizer"],
        )

    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        state = get_model_state_dict(
            wrapped, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
        )
        return state if self.process.rank == 0 else None

    @staticmethod
    def _state(wrapped: nn.Module, optimizer) -> dict:
        model_state, optimizer_state = get_state_dict(wrapped, optimizer)
        return {"model": model_state, "optimizer": optimizer_state}


def dcp_writer(storage: Storage, path: str) -> dcp.StorageWriter:
    # DCP serialises tensor by tensor: a second thread keeps the disk busy meanwhile.
    threads = min(WRITER_THREADS, os.cpu_count() or 1)
    if storage.local:
        # fsyncs every file before returning: the marker is written after.
        return dcp.FileSystemWriter(path, thread_count=threads)
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecWriter

    return FsspecWriter(path, thread_count=threads)


def dcp_reader(storage: Storage, path: str) -> dcp.StorageReader:
    if storage.local:
        return dcp.FileSystemReader(path)
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader

    return FsspecReader(path)
