"""The JAX trainer's configuration: the PyTorch trainer's presets and schedule, a mesh in place
of the strategies.

The presets are trainers/config.py's (the same model, batch and schedule for a name), so a
`tiny` run is the same job on either framework; `--set field=value` reaches every field here.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field

from trainers.config import ModelConfig, TrainConfig
from trainers.config import preset as torch_preset
from trainers.jax.mesh import MeshShape, fit_problems, resolve_mesh

PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class JaxTrainConfig:
    preset: str = "tiny"
    model: ModelConfig = field(default_factory=ModelConfig)

    # Mesh degrees (data, fsdp, tensor; `--mesh D,F,T`): they multiply to the job's device
    # count, all hosts together.
    mesh_data: int = 0  # 0 = the devices fsdp and tensor leave
    mesh_fsdp: int = 1
    mesh_tensor: int = 1

    steps: int = 300
    seed: int = 1337
    batch_size: int = 16  # GLOBAL batch, in sequences
    # auto: bf16 arithmetic where the device has it (TPU, GPU), fp32 on CPU. Parameters and
    # optimizer state are fp32 in every case.
    precision: str = "auto"

    lr: float = 3e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 20
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # 0 disables

    log_every: int = 1
    eval_every: int = 100  # 0 disables evaluation
    eval_batches: int = 2

    checkpoint_every: int = 100  # 0 = only the final and the emergency checkpoints
    keep: int = 3  # committed checkpoints kept; 0 keeps all
    checkpoint_dir: str | None = None
    resume_from: str | None = None  # a complete step folder, used while checkpoint_dir has none
    model_dir: str | None = None

    data: str | None = None  # a text file; None = the Python standard library's sources
    corpus_max_bytes: int = 4 * 1024 * 1024

    def to_dict(self) -> dict[str, typing.Any]:
        return dataclasses.asdict(self)


# The fields a PyTorch preset shares with this config: all but the strategies, the devices and
# the precision (fp32 there unless asked; here the device decides unless asked).
_SHARED = tuple(
    f.name for f in dataclasses.fields(JaxTrainConfig)
    if f.name in {g.name for g in dataclasses.fields(TrainConfig)} and f.name != "precision"
)


def preset(name: str) -> JaxTrainConfig:
    base: TrainConfig = torch_preset(name)
    return JaxTrainConfig(**{name: getattr(base, name) for name in _SHARED})


def mesh_shape(config: JaxTrainConfig, device_count: int) -> MeshShape:
    return resolve_mesh(config.mesh_data, config.mesh_fsdp, config.mesh_tensor, device_count)


def validate(config: JaxTrainConfig, device_count: int) -> None:
    """Fail before any work starts, with a message that says what to change."""
    shape = mesh_shape(config, device_count)  # raises when the degrees do not fit
    m = config.model
    problems = fit_problems(shape, m.n_embd, m.n_head, m.vocab_size, config.batch_size)
    if config.steps < 1:
        problems.append("steps must be >= 1")
    if m.n_embd % m.n_head:
        problems.append(f"model.n_embd {m.n_embd} must be a multiple of model.n_head {m.n_head}")
    if m.dropout:
        problems.append("model.dropout must be 0 for the JAX trainer (runs stay reproducible "
                        "across meshes)")
    if config.precision not in PRECISIONS:
        problems.append(f"precision must be one of {', '.join(PRECISIONS)}, "
                        f"not {config.precision!r}")
    for name in ("checkpoint_every", "keep", "eval_every", "eval_batches", "warmup_steps"):
        if getattr(config, name) < 0:
            problems.append(f"{name} must be >= 0")
    # A tuning job draws these from the ranges it is given: a bad range fails the trial here.
    if not (math.isfinite(config.lr) and config.lr > 0):
        problems.append(f"lr must be a positive number, not {config.lr!r}")
    if not (math.isfinite(config.weight_decay) and config.weight_decay >= 0):
        problems.append(f"weight_decay must be >= 0, not {config.weight_decay!r}")
    if config.log_every < 1:
        problems.append("log_every must be >= 1")
    if problems:
        raise ValueError("invalid configuration: " + "; ".join(problems))
