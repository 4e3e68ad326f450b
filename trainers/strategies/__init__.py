"""Parallelism strategies, by name, and the checks that refuse a bad combination before any
process group exists.

The trainer only talks to `Strategy` (base.py). A strategy's module is imported when it is
first needed; the zero module imports DeepSpeed itself only when a run sets up (seconds).
"""

from __future__ import annotations

import importlib
import importlib.util

from trainers import deepspeed_config
from trainers.cluster import Process
from trainers.config import FSDP_MODES, ZERO_STAGES, FSDPConfig, TrainConfig
from trainers.parallel import hybrid_mesh_shape, resolve_dims
from trainers.strategies.base import Strategy

_CLASSES = {
    "ddp": "trainers.strategies.ddp:DataParallel",
    "single": "trainers.strategies.ddp:DataParallel",
    "fsdp": "trainers.strategies.fsdp:FullyShard",
    **{name: "trainers.strategies.zero:DeepSpeedZero" for name in ZERO_STAGES},
}
SUPPORTED = tuple(_CLASSES)


def check_name(name: str) -> str:
    """The strategy name, or a ValueError that lists the valid ones."""
    if name in SUPPORTED:
        return name
    raise ValueError(f"unknown strategy {name!r}; valid strategies: {', '.join(SUPPORTED)}")


def check_config(config: TrainConfig, process: Process) -> None:
    """Refuse what this strategy cannot run at this size, with a message that says what to do.
    Runs after `config.validate` (the parallel degrees are known to fit)."""
    name = check_name(config.strategy)
    world_size = process.world_size
    if name == "single" and world_size != 1:
        raise ValueError(
            f"strategy 'single' runs one process, but the world size is {world_size}; "
            "use --strategy ddp"
        )
    dp = resolve_dims(config.dp, config.tp, config.pp, world_size).dp
    if name == "fsdp":
        _check_fsdp(config, dp, process.local_world_size)
    elif config.fsdp != FSDPConfig():
        raise ValueError("--fsdp-mode, --fsdp-config and fsdp.* apply to --strategy fsdp only")
    if name in ZERO_STAGES:
        if importlib.util.find_spec("deepspeed") is None:
            raise ValueError(f"strategy {name} needs the deepspeed package, which is not installed")
        deepspeed_config.build(config, dp, ZERO_STAGES[name])  # raises on a disagreement
    else:
        if config.deepspeed is not None:
            raise ValueError("--deepspeed-config applies to the zero1, zero2 and zero3 strategies")
        if config.offload_optimizer or config.offload_params:
            raise ValueError("offload_optimizer/offload_params apply to zero1, zero2 and zero3")
    if config.async_checkpoint and not strategy_class(name).supports_async_save:
        background = [n for n in SUPPORTED if strategy_class(n).supports_async_save]
        raise ValueError(
            f"async_checkpoint is implemented for {', '.join(background)}; {name} writes its "
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
    return strategy_class(config.strategy)(config, process, device)
