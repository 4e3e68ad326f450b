"""Parallelism strategies, by name, and the checks that refuse a bad combination before any
process group exists.

The trainer only talks to `Strategy` (base.py). A strategy's module is imported when it is
first needed; the zero module imports DeepSpeed itself only when a run sets up (seconds).

Tensor and pipeline parallelism: ddp and fsdp with tp or pp above 1 run as tp_pp and
tp_pp_fsdp (tensor_pipeline.py: DDP or FSDP2 over the dp dimension of a (pp, dp, tp) mesh).
Named directly, tp_pp and tp_pp_fsdp also run at tp = pp = 1, e.g. to resume a tensor/pipeline
parallel checkpoint as plain data parallelism.
"""

from __future__ import annotations

import importlib
import importlib.util

from trainers.job.cluster import Process
from trainers.torch.config import FSDP_MODES, ZERO_STAGES, FSDPConfig, TrainConfig
from trainers.torch.parallel import hybrid_mesh_shape, resolve_dims
from trainers.torch.strategies import deepspeed_config
from trainers.torch.strategies.base import Strategy

_CLASSES = {
    "ddp": "trainers.torch.strategies.ddp:DataParallel",
    "single": "trainers.torch.strategies.ddp:DataParallel",
    "fsdp": "trainers.torch.strategies.fsdp:FullyShard",
    **{name: "trainers.torch.strategies.zero:DeepSpeedZero" for name in ZERO_STAGES},
    "tp_pp": "trainers.torch.strategies.tensor_pipeline:TensorPipeline",
    "tp_pp_fsdp": "trainers.torch.strategies.tensor_pipeline:TensorPipeline",
}
SUPPORTED = tuple(_CLASSES)
MESH_STRATEGIES = ("tp_pp", "tp_pp_fsdp")
# What ddp and fsdp run as when tp or pp is above 1.
_WITH_MODEL_PARALLEL = {"ddp": "tp_pp", "fsdp": "tp_pp_fsdp"}
# Why DeepSpeed ZeRO is not combined with tp/pp here.
ZERO_WITH_MODEL_PARALLEL = (
    "DeepSpeed combines ZeRO with tensor parallelism only through a Megatron model that brings "
    "its own model-parallel unit, and with pipeline parallelism only for its own "
    "PipelineModule (and then ZeRO-1 at most); this trainer splits its model with PyTorch's "
    "DTensor and torch.distributed.pipelining instead. Use --strategy fsdp (FSDP2 shards "
    "parameters, gradients and optimizer states over dp like ZeRO-3) or ddp with tp/pp"
)


def effective_name(config: TrainConfig) -> str:
    """The strategy that runs: ddp and fsdp become tp_pp / tp_pp_fsdp when tp or pp > 1."""
    if config.tp * config.pp > 1 and config.strategy in _WITH_MODEL_PARALLEL:
        return _WITH_MODEL_PARALLEL[config.strategy]
    return config.strategy


def check_name(name: str) -> str:
    """The strategy name, or a ValueError that lists the valid ones."""
    if name in SUPPORTED:
        return name
    raise ValueError(f"unknown strategy {name!r}; valid strategies: {', '.join(SUPPORTED)}")


def check_config(config: TrainConfig, process: Process) -> None:
    """Refuse what this strategy cannot run at this size, with a message that says what to do.
    Runs after `validation.validate` (the parallel degrees are known to fit)."""
    name = check_name(config.strategy)
    world_size = process.world_size
    if name == "single" and world_size != 1:
        raise ValueError(
            f"strategy 'single' runs one process, but the world size is {world_size}; "
            "use --strategy ddp"
        )
    dims = resolve_dims(config.dp, config.tp, config.pp, world_size)
    dp = dims.dp
    if name in ZERO_STAGES and dims.tp * dims.pp > 1:
        raise ValueError(
            f"{name} with tp {dims.tp} x pp {dims.pp} is refused: {ZERO_WITH_MODEL_PARALLEL}"
        )
    if name == "single" and dims.tp * dims.pp > 1:
        raise ValueError("strategy 'single' runs one process: tp and pp must be 1")
    mesh = effective_name(config) in MESH_STRATEGIES
    local = process.local_world_size
    if mesh and local > 1 and local % dims.tp:
        raise ValueError(
            f"tp {dims.tp} must divide the {local} processes per node: a tensor-parallel group "
            "all-reduces every layer and must stay inside one node (one Vertex replica), "
            f"where the GPUs share NVLink; use tp in "
            + ", ".join(str(d) for d in range(1, local + 1) if local % d == 0)
        )
    if name in ("fsdp", "tp_pp_fsdp"):
        _check_fsdp(config, dp, process.local_world_size)
        if mesh and config.fsdp.mode == "hybrid_shard":
            raise ValueError(
                "fsdp hybrid_shard with tensor/pipeline parallelism is not implemented: use "
                "fsdp mode full_shard or shard_grad_op (FSDP shards over the whole dp dimension)"
            )
    elif config.fsdp != FSDPConfig():
        raise ValueError("--fsdp-mode, --fsdp-config and fsdp.* apply to --strategy fsdp only")
    if not mesh and (
        config.pp_schedule != "1f1b" or config.pp_virtual_stages != 1 or config.sequence_parallel
    ):
        raise ValueError(
            "pp_schedule, pp_virtual_stages and sequence_parallel apply with tp or pp above 1 "
            "(or strategy tp_pp / tp_pp_fsdp)"
        )
    if name == "zero3" and config.activation_checkpointing == "selective":
        raise ValueError(
            "zero3 with selective activation checkpointing is refused: ZeRO-3 gathers and "
            "frees each layer's parameters inside the block's forward, which per-operator "
            "selective checkpointing cannot replay in backward; use "
            "--activation-checkpointing full (or zero1/zero2, or fsdp, with selective)"
        )
    if name in ZERO_STAGES:
        if importlib.util.find_spec("deepspeed") is None:
            raise ValueError(f"strategy {name} needs the deepspeed package, which is not installed")
        deepspeed_config.build(config, dp, ZERO_STAGES[name])  # raises on a disagreement
    else:
        if config.deepspeed is not None:
            raise ValueError("--deepspeed-config applies to the zero1, zero2 and zero3 strategies")
        if config.offload_optimizer or config.offload_params:
            raise ValueError("offload_optimizer/offload_params apply to zero1, zero2 and zero3")
    running = effective_name(config)
    if config.async_checkpoint and not strategy_class(running).supports_async_save:
        background = [n for n in SUPPORTED if strategy_class(n).supports_async_save]
        raise ValueError(
            f"async_checkpoint is implemented for {', '.join(background)} at tp = pp = 1; "
            f"{running} writes its "
            "checkpoints synchronously (drop --set async_checkpoint=true)"
        )


def _check_fsdp(config: TrainConfig, dp: int, local_world_size: int) -> None:
    mode = config.fsdp.mode
    if mode not in FSDP_MODES:
        raise ValueError(f"unknown fsdp mode {mode!r}; valid: {', '.join(FSDP_MODES)}")
    if mode == "hybrid_shard":
        hybrid_mesh_shape(dp, config.fsdp.shard_size, local_world_size)
    elif config.fsdp.shard_size:
        raise ValueError(f"fsdp.shard_size applies to hybrid_shard only, not {mode}")


def strategy_class(name: str) -> type[Strategy]:
    module, _, cls = _CLASSES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def create(config: TrainConfig, process: Process, device: str) -> Strategy:
    check_config(config, process)
    return strategy_class(effective_name(config))(config, process, device)
