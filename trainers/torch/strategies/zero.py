"""DeepSpeed ZeRO stages 1, 2 and 3 (zero1/zero2/zero3), with optional CPU offload.

The engine owns backward, gradient accumulation, clipping and the optimizer step; the trainer
passes it torch's AdamW (no compiled DeepSpeed optimizer) and still sets the learning rate on
that optimizer every step. The DeepSpeed JSON comes from `deepspeed_config.py`.

Checkpoints: `engine.save_checkpoint` on EVERY rank (each writes its partition of the optimizer
state, and under ZeRO-3 of the weights; a save called on rank 0 alone waits forever for the
others), into `deepspeed/` inside the step folder. DeepSpeed writes only to local disks, so for
gs:// each rank saves into a local staging folder and uploads what it wrote. A ZeRO checkpoint
loads at the data-parallel size that wrote it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from types import ModuleType
from typing import Any

import torch
from torch import nn

from trainers.storage import Storage
from trainers.torch import activation_checkpointing, models
from trainers.torch.config import ZERO_STAGES
from trainers.torch.distributed import torchrun_env
from trainers.torch.models.hf import CausalLM
from trainers.torch.optim import build_optimizer
from trainers.torch.parallel import resolve_dims
from trainers.torch.strategies.base import Strategy
from trainers.torch.strategies.deepspeed_config import build

TAG = "deepspeed"  # the sub-folder (DeepSpeed's "tag") of a step folder


def import_deepspeed(device: str) -> ModuleType:
    """DeepSpeed, set up for this device, with its chatter kept off stdout (the event stream)."""
    if device == "cpu":
        # Otherwise DeepSpeed picks CUDA whenever a GPU is visible, even for --set device=cpu.
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    import deepspeed
    import deepspeed.ops

    deepspeed.utils.logger.setLevel(logging.WARNING)
    if device == "cpu":
        # The shared-memory all-reduce op serves only DeepSpeed's inference all-reduce, yet the
        # CPU backend JIT-compiles it at start-up (about a minute of C++ build per fresh
        # machine). Marked unavailable, DeepSpeed uses torch.distributed as for training.
        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    return deepspeed


class DeepSpeedZero(Strategy):
    checkpoint_format = "deepspeed"
    every_rank_writes = True

    def _joined(self) -> tuple[ModuleType, dict[str, Any]]:
        """DeepSpeed on the joined process group, and this run's DeepSpeed config."""
        deepspeed = import_deepspeed(self.device)
        # DeepSpeed reads the rank from the environment (LOCAL_RANK at least) and looks for
        # MPI when it is missing; on Vertex the rank may have come from CLUSTER_SPEC.
        for name, value in torchrun_env(self.process).items():
            os.environ.setdefault(name, value)
        dims = resolve_dims(self.config.dp, self.config.tp, self.config.pp, self.process.world_size)
        deepspeed.init_distributed(auto_mpi_discovery=False)  # reuses the joined process group
        return deepspeed, build(self.config, dims.dp, ZERO_STAGES[self.name])

    def build_context(self) -> contextlib.AbstractContextManager | None:
        """ZeRO-3 builds a Hugging Face model under `zero.Init`: each parameter is partitioned
        across the ranks as soon as it is made, so no rank ever holds the whole model."""
        if ZERO_STAGES[self.name] != 3:
            return None
        deepspeed, config = self._joined()
        return deepspeed.zero.Init(config_dict_or_path=config)

    def setup(self, model: nn.Module) -> tuple[nn.Module, torch.optim.Optimizer]:
        deepspeed, config = self._joined()
        self.deepspeed = deepspeed
        if isinstance(model, CausalLM) and not models.is_meta(model):
            self._fill_partitions(model)  # built under zero.Init
        models.materialise(model, self.device)
        activation_checkpointing.apply(
            model, self.config.activation_checkpointing, self.config.compile_blocks)
        optimizer = build_optimizer(model, self.config)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        return engine, optimizer

    @torch.no_grad()
    def _fill_partitions(self, model: CausalLM) -> None:
        """The model's initial (or loaded) values into ZeRO-3's partitions, one parameter at a
        time: rank 0 writes the gathered parameter, and each rank keeps its partition."""
        for tensor, value in model.initial_values():
            if not hasattr(tensor, "ds_id"):  # a buffer: whole on every rank
                tensor.copy_(value())
                continue
            with self.deepspeed.zero.GatheredParameters([tensor], modifier_rank=0):
                if self.process.rank == 0:
                    tensor.data.copy_(value())

    def autocast(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()  # with bf16 the engine keeps the module in bf16

    def backward(self, engine: nn.Module, loss: torch.Tensor, accumulation: int) -> None:
        # The engine divides by its gradient_accumulation_steps (= `accumulation`) itself, and
        # its step() counts micro-steps: it steps the optimizer (clipping first) only at the
        # last one of each optimizer step, where it also reduces the gradients.
        engine.backward(loss)
        engine.step()

    def optimizer_step(self, engine: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        """Nothing left to do: the engine stepped at the last micro-step's backward."""

    def save(self, storage: Storage, folder: str, engine: nn.Module, optimizer) -> None:
        if storage.local:
            engine.save_checkpoint(folder, tag=TAG)
            return
        with tempfile.TemporaryDirectory(prefix="ds-checkpoint-") as staging:
            engine.save_checkpoint(staging, tag=TAG)
            storage.put_tree(staging, folder)  # this rank's files

    def load(self, storage: Storage, folder: str, engine: nn.Module, optimizer) -> None:
        with tempfile.TemporaryDirectory(prefix="ds-checkpoint-") as staging:
            if storage.local:
                source = folder
            else:
                storage.get_tree(storage.join(folder, TAG), os.path.join(staging, TAG))
                source = staging
            path, _ = engine.load_checkpoint(
                source, tag=TAG, load_optimizer_states=True, load_lr_scheduler_states=False
            )
        if path is None:
            raise RuntimeError(f"DeepSpeed found no checkpoint in {folder}/{TAG}")

    def full_state_dict(self, engine: nn.Module) -> dict[str, torch.Tensor] | None:
        module = engine.module
        # Under ZeRO-3 each rank holds a slice of every weight: gather them (on every rank,
        # a collective); for stages 1 and 2 this is a no-op.
        with self.deepspeed.zero.GatheredParameters(list(module.parameters()), modifier_rank=None):
            if self.process.rank != 0:
                return None
            return {k: v.detach().float().cpu().clone() for k, v in module.state_dict().items()}

    def check_resumable(self, metadata: dict[str, Any], path: str) -> None:
        super().check_resumable(metadata, path)
        if (metadata.get("world_size"), metadata.get("strategy")) != (
            self.process.world_size,
            self.name,
        ):
            raise ValueError(
                f"checkpoint {path} was written by {metadata.get('world_size')} ranks under "
                f"{metadata.get('strategy')}; a ZeRO checkpoint resumes only with the same "
                f"strategy and world size (here {self.name}, {self.process.world_size} ranks)"
            )
