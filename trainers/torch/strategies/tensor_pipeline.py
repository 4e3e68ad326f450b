"""Tensor x pipeline x data parallelism on one DeviceMesh (pp, dp, tp), as torchtitan composes it.

The mesh's innermost dimension is tp, so a tensor-parallel group is consecutive ranks: the
GPUs of one node (one Vertex replica), where its per-layer collectives run over NVLink. pp is
outermost: its point-to-point traffic, the least of the three, crosses nodes.

The wrapping order, in one place (`setup`): cut the pipeline stages; on each stage, tensor
parallelism (trainers/torch/tensor_parallel.py), then activation checkpointing and compilation
of its blocks (trainers/torch/activation_checkpointing.py), then data parallelism over dp:
`replicate` for ddp (DDP's all-reduce of gradients, built on FSDP2 so it works on DTensor
parameters) or `fully_shard` for fsdp (each block, then the stage). Then one optimizer per
stage, and for pp > 1 the pipeline schedule (trainers/torch/pipeline.py).

Two things the single model did for free are done here:
- the tied embedding: with pp > 1 the first stage's embedding and the last stage's head are
  copies on different ranks; after backward their gradients are summed between the two, so
  the copies stay equal (Megatron's embedding group).
- the global gradient norm for clipping (trainers/torch/grad_norm.py).

Checkpoints: torch.distributed.checkpoint, every rank writes its shards under the full
model's parameter names (stages keep them) with a flattened optimizer state, so a checkpoint
loads at any tp, pp and dp (DCP reshards on load).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed._composable.replicate_with_fsdp import replicate
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor

from trainers.job.cluster import Process
from trainers.storage import Storage
from trainers.torch import activation_checkpointing, models, pipeline, tensor_parallel
from trainers.torch.config import TrainConfig
from trainers.torch.grad_norm import clip_grad_norm, match_gradient_placements
from trainers.torch.model import lm_loss
from trainers.torch.optim import build_optimizer
from trainers.torch.parallel import ParallelDims, pipeline_microbatches, resolve_dims
from trainers.torch.strategies.base import Strategy
from trainers.torch.strategies.fsdp import dcp_reader, dcp_writer

DCP_FOLDER = "dcp"
MESH_DIMS = ("pp", "dp", "tp")
_STATE_OPTIONS = StateDictOptions(flatten_optimizer_state_dict=True)


class TensorPipeline(Strategy):
    checkpoint_format = "dcp-mesh"
    every_rank_writes = True

    def __init__(self, config: TrainConfig, process: Process, device: str) -> None:
        super().__init__(config, process, device)
        self.dims: ParallelDims = resolve_dims(config.dp, config.tp, config.pp, process.world_size)
        self.data_parallel = "fsdp" if config.strategy in ("fsdp", "tp_pp_fsdp") else "ddp"
        self.is_main = process.rank == 0

    # -- building --------------------------------------------------------------------------

    def setup(self, model: nn.Module) -> tuple[nn.Module, torch.optim.Optimizer]:
        dims, config = self.dims, self.config
        self.mesh: DeviceMesh = init_device_mesh(
            torch.device(self.device).type,
            (dims.pp, dims.dp, dims.tp),
            mesh_dim_names=MESH_DIMS,
        )
        pp_rank = self.mesh.get_local_rank("pp")
        self.stages = dims.pp * config.pp_virtual_stages
        if dims.pp > 1:
            parts = pipeline.build_stage_models(
                lambda layers, first, last: models.pipeline_stage(
                    model, config, layers, first, last),
                len(models.transformer_blocks(model)),
                pp_rank, dims.pp, config.pp_virtual_stages,
            )
            parts = [(index, models.on_device(part, self.device)) for index, part in parts]
        else:
            parts = [(0, model)]
        for _, part in parts:
            if dims.tp > 1:
                models.parallelize(part, self.mesh["tp"], config.sequence_parallel)
            activation_checkpointing.apply(
                part, config.activation_checkpointing, config.compile_blocks)
            self._data_parallel(part)
            # A model built on the meta device gets this rank's shards of its stage's weights.
            models.materialise(part, self.device)
        self.parts: list[nn.Module] = [part for _, part in parts]
        # (embedding, head) names when the model ties them, else None.
        self.tied_names = models.tied_names(model)
        self.optimizers = [build_optimizer(part, config) for part in self.parts]
        self.holds_first = parts[0][0] == 0
        self.holds_last = parts[-1][0] == self.stages - 1
        self.pp_group = self.mesh.get_group("pp") if dims.pp > 1 else None
        split_tied = dims.pp > 1 and self.tied_names is not None
        self.tied_group = self._tied_group() if split_tied else None
        # The head's copy of the tied embedding: its gradient is the first stage's after the
        # sum, so the global norm counts it once (on the first stage).
        self.tied_copies = (
            {models.output_head(self.parts[-1]).weight}
            if split_tied and self.holds_last else set()
        )
        self.schedule = None
        if dims.pp > 1:
            rank_batch = config.batch_size // dims.dp
            self.schedule = pipeline.build_schedule(
                config.pp_schedule,
                parts,
                self.stages,
                torch.device(self.device),
                self.pp_group,
                pipeline_microbatches(
                    dims, config.pp_virtual_stages, rank_batch, config.micro_batch_size
                ),
                lm_loss,
            )
        return nn.ModuleList(self.parts), _Optimizers(self.optimizers)

    def _data_parallel(self, part: nn.Module) -> None:
        if self.dims.dp == 1:
            return
        mesh = self.mesh["dp"]
        if self.data_parallel == "ddp":
            replicate(part, mesh=mesh)
            return
        # Under a pipeline each stage runs forward once per micro-batch: keeping parameters
        # gathered until backward saves an all-gather per micro-batch (torchtitan does too).
        reshard = self.config.fsdp.mode == "full_shard" and self.dims.pp == 1
        for block in models.transformer_blocks(part):
            fully_shard(block, mesh=mesh, reshard_after_forward=reshard)
        fully_shard(part, mesh=mesh, reshard_after_forward=reshard)

    def _tied_group(self) -> dist.ProcessGroup | None:
        """The group of the first and the last pipeline rank at this rank's (dp, tp) place.
        Every rank creates every such group (new_group is collective); returns its own."""
        ranks = self.mesh.mesh  # shape (pp, dp, tp): global ranks
        mine = None
        for d in range(self.dims.dp):
            for t in range(self.dims.tp):
                pair = [int(ranks[0, d, t]), int(ranks[-1, d, t])]
                group = dist.new_group(pair)
                if self.process.rank in pair:
                    mine = group
        return mine

    # -- the step --------------------------------------------------------------------------

    def data_shard(self) -> tuple[int, int]:
        """Every rank of a tensor- or pipeline-parallel group sees the same data."""
        return self.mesh.get_local_rank("dp"), self.dims.dp

    def forward_backward(
        self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor
    ) -> torch.Tensor:
        if self.schedule is None:
            return self._accumulate(x, y)
        losses: list[torch.Tensor] = []
        inputs = (x,) if self.holds_first else ()
        with tensor_parallel.loss_context(self.dims.tp), self.autocast():
            self.schedule.step(*inputs, target=y, losses=losses)
        self._sum_tied_gradients()
        return self._pipeline_loss(losses)

    def _accumulate(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Without a pipeline: micro-steps of micro_batch_size, gradients averaged over dp on
        the last one."""
        (part,) = self.parts
        micro = self.config.micro_batch_size or len(x)
        accumulation = len(x) // micro
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for i in range(accumulation):
            rows = slice(i * micro, (i + 1) * micro)
            last = i == accumulation - 1
            syncing = contextlib.nullcontext() if last else self.accumulating(part)
            with syncing, tensor_parallel.loss_context(self.dims.tp):
                with self.autocast():
                    _, loss = part(x[rows], y[rows])
                (loss / accumulation).backward()
            total += _plain(loss).detach().double()
        return total / accumulation

    def _pipeline_loss(self, losses: list[torch.Tensor]) -> torch.Tensor:
        """The mean over micro-batches where the last stage is, times pp (zero elsewhere): the
        trainer averages over all ranks, which then gives the mean over dp."""
        if not self.holds_last:
            return torch.zeros((), dtype=torch.float64, device=self.device)
        mean = torch.stack([_plain(loss).detach().double() for loss in losses]).mean()
        return mean * self.dims.pp

    def _sum_tied_gradients(self) -> None:
        if self.tied_group is None:
            return
        if self.holds_first:
            weight = models.input_embedding(self.parts[0]).weight
        elif self.holds_last:
            weight = models.output_head(self.parts[-1]).weight
        else:
            return
        match_gradient_placements([weight])  # both sides' gradients split alike
        grad = weight.grad
        local = grad.to_local() if isinstance(grad, DTensor) else grad
        dist.all_reduce(local, group=self.tied_group)

    @contextlib.contextmanager
    def accumulating(self, wrapped: nn.Module) -> Iterator[None]:
        modules = [m for m in self.parts if isinstance(m, FSDPModule)]
        for module in modules:
            module.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            for module in modules:
                module.set_requires_gradient_sync(True)

    def optimizer_step(self, wrapped: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        match_gradient_placements(wrapped.parameters())
        if self.config.grad_clip:
            clip_grad_norm(
                wrapped.parameters(), self.config.grad_clip, self.pp_group, self.tied_copies
            )
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def eval_loss(self, wrapped: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.schedule is None:
            with tensor_parallel.loss_context(self.dims.tp), self.autocast():
                _, loss = self.parts[0](x, y)
            return _plain(loss).double()
        losses: list[torch.Tensor] = []
        inputs = (x,) if self.holds_first else ()
        with tensor_parallel.loss_context(self.dims.tp), self.autocast():
            self.schedule.eval(*inputs, target=y, losses=losses)
        return self._pipeline_loss(losses)

    # -- checkpoints -----------------------------------------------------------------------

    def _state(self, saving: bool = False) -> dict[str, Any]:
        model_state: dict[str, Any] = {}
        optimizer_state: dict[str, Any] = {}
        for part, optimizer in zip(self.parts, self.optimizers, strict=True):
            model, optim = get_state_dict(part, optimizer, options=_STATE_OPTIONS)
            model_state.update(model)
            optimizer_state.update(optim)
            whole = (models.input_embedding(part) is not None
                     and models.output_head(part) is not None)
            if saving and self.tied_names and whole:
                optimizer_state.update(_head_aliases(optim, *self.tied_names))
        return {"model": model_state, "optimizer": optimizer_state}

    def save(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        dcp.save(
            self._state(saving=True),
            storage_writer=dcp_writer(storage, storage.join(folder, DCP_FOLDER)),
        )

    def load(self, storage: Storage, folder: str, wrapped: nn.Module, optimizer) -> None:
        state = self._state()
        dcp.load(state, storage_reader=dcp_reader(storage, storage.join(folder, DCP_FOLDER)))
        for part, optim in zip(self.parts, self.optimizers, strict=True):
            set_state_dict(
                part,
                optim,
                model_state_dict=state["model"],
                optim_state_dict=state["optimizer"],
                options=StateDictOptions(flatten_optimizer_state_dict=True, strict=False),
            )

    def full_state_dict(self, wrapped: nn.Module) -> dict[str, torch.Tensor] | None:
        """Every stage's weights, gathered whole, sent to rank 0 by the first rank of each
        stage's tensor- and data-parallel groups."""
        mine: dict[str, torch.Tensor] = {}
        for part in self.parts:
            state = get_model_state_dict(part, options=StateDictOptions(full_state_dict=True))
            mine.update({k: _plain(v).detach().cpu() for k, v in state.items()})
        sender = self.mesh.get_local_rank("dp") == 0 and self.mesh.get_local_rank("tp") == 0
        gathered: list[Any] | None = [None] * self.process.world_size if self.is_main else None
        dist.gather_object(mine if sender else None, gathered, dst=0)
        if gathered is None:
            return None
        full: dict[str, torch.Tensor] = {}
        for state in gathered:
            full.update(state or {})
        return full

    def check_resumable(self, metadata: dict[str, Any], path: str) -> None:
        found = metadata.get("format", "torch")
        if found != self.checkpoint_format:
            raise ValueError(
                f"checkpoint {path} was written by strategy {metadata.get('strategy')!r} "
                f"({found} format); tensor/pipeline parallel runs read checkpoints written "
                "by tensor/pipeline parallel runs (at any degrees, tp=pp=1 with strategy "
                "tp_pp or tp_pp_fsdp included): use another checkpoint directory"
            )


class _Optimizers:
    """One optimizer per pipeline stage, stepped as one (torchtitan's optimizer container):
    the trainer sets the learning rate through `param_groups` and steps it once."""

    def __init__(self, optimizers: list[torch.optim.Optimizer]) -> None:
        self.optimizers = optimizers

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [group for optimizer in self.optimizers for group in optimizer.param_groups]

    def step(self) -> None:
        for optimizer in self.optimizers:
            optimizer.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=set_to_none)


def _head_aliases(optimizer_state: dict[str, Any], embedding: str, head: str) -> dict[str, Any]:
    """The tied embedding's optimizer state under the head's name as well. A model that holds
    both keys it under the embedding's name only; a pipeline's last stage, which holds the
    head's copy alone, looks it up under the head's."""
    aliases = {}
    for key, value in optimizer_state.items():
        for kind in ("state", "param_groups"):
            if key.startswith(f"{kind}.{embedding}."):
                suffix = key.removeprefix(f"{kind}.{embedding}.")
                aliases[f"{kind}.{head}.{suffix}"] = value
    return aliases


def _plain(value: torch.Tensor) -> torch.Tensor:
    """A replicated DTensor (a loss, a gathered weight) as the tensor every rank holds."""
    return value.full_tensor() if isinstance(value, DTensor) else value
