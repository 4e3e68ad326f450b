"""What a strategy adds to a job's container (``Launch``), and the trainer processes it spreads
the model over (``Topology``): the values parallelism.py writes and the TPU meshes read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vertexplan.composer.deepspeed_config import Batch


@dataclass
class Launch:
    """What the job's chief runs, and what its strategy adds to the container."""

    entrypoint: bool = False  # the image's own ENTRYPOINT or a Python package's module
    builtin: bool = True  # this project's trainer
    writes_command: bool = True  # the composer writes the trainer's command line
    args: list[str] = field(default_factory=list)  # built-in trainer only, before the user's
    env: list[tuple[str, str]] = field(default_factory=list)
    deepspeed: dict[str, Any] | None = None
    fsdp: dict[str, Any] | None = None
    batch: Batch | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def error(self, key: str, message: str, suggestions: tuple[str, ...] = ()) -> None:
        self.errors.setdefault(key, []).append(message)
        if suggestions:
            self.suggestions[key] = suggestions


@dataclass(frozen=True)
class Topology:
    """The devices and trainer processes of a job: who the strategy spreads the model over."""

    world_size: int  # the devices the model is spread over: GPUs, TPU chips, CPU replicas
    devices_per_replica: int
    replicas: int
    tpu: bool
    # The trainer processes that run: one per GPU (torchrun) or CPU replica, but one per TPU
    # VM, driving all its chips (the JAX trainer and PyTorch/XLA's SPMD mode alike).
    processes: int = 1
