"""What every trainer's configuration holds: the model, the schedule, evaluation, checkpoints,
export and data, with presets as small functions, `key=value` overrides and the checks that
do not depend on the framework.

Each trainer's config extends `RunConfig` with its own fields: the PyTorch trainer's strategies
and parallel degrees (trainers/torch/config.py), the JAX trainer's mesh (trainers/jax/config.py).
The CLI sets the handful of fields people change per run; everything else is reachable with
`--set field=value` (or `--set model.n_layer=4`) instead of a flag per knob.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from trainers.storage import StorageError, storage_for

# Activation checkpointing of the transformer blocks, as each trainer applies it (PyTorch:
# trainers/torch/activation_checkpointing.py, JAX: trainers/jax/model.py): none; selective =
# the matrix products' outputs kept, attention and elementwise ops recomputed in backward;
# full = only each block's input kept, the whole block recomputed.
CHECKPOINTING_MODES = ("none", "selective", "full")


@dataclass(frozen=True)
class ModelConfig:
    """A byte-level GPT: tokens are the bytes 0..255."""

    block_size: int = 64  # context length in tokens
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 64
    vocab_size: int = 256
    dropout: float = 0.0  # 0 keeps runs reproducible across world sizes
    bias: bool = True


@dataclass(frozen=True)
class RunConfig:
    """The fields every trainer reads; a preset's name gives the same job on any framework."""

    preset: str = "tiny"
    model: ModelConfig = field(default_factory=ModelConfig)

    steps: int = 300
    seed: int = 1337
    batch_size: int = 16  # GLOBAL batch, in sequences, summed over all data-parallel ranks
    precision: str = "fp32"  # the arithmetic of the matrix products; each trainer lists its own

    lr: float = 3e-3
    min_lr_ratio: float = 0.1  # cosine decays to lr * min_lr_ratio at the last step
    warmup_steps: int = 20
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # 0 disables

    log_every: int = 1  # step events every N steps (the last step is always printed)
    eval_every: int = 100  # 0 disables evaluation
    eval_batches: int = 2  # global batches of held-out text per evaluation

    checkpoint_every: int = 100  # 0 = only the final and the emergency (preemption) checkpoints
    keep: int = 3  # committed checkpoints kept; 0 keeps all
    checkpoint_dir: str | None = None  # local path or gs://; None = no checkpoints
    # A complete checkpoint (a step folder) to start from while checkpoint_dir holds none: a
    # resubmission from an earlier job's checkpoint ($CP_RESUME_FROM from the control plane).
    resume_from: str | None = None
    model_dir: str | None = None  # where the final model is exported; None = not exported

    data: str | None = None  # a text file; None = the Python standard library's sources
    corpus_max_bytes: int = 4 * 1024 * 1024

    def to_dict(self) -> dict[str, typing.Any]:
        return dataclasses.asdict(self)


def tiny() -> dict[str, typing.Any]:
    """~0.12M parameters: two CPU processes run 300 steps in seconds. The test and demo preset."""
    return {}


def small() -> dict[str, typing.Any]:
    """~10.8M parameters (nanoGPT's Shakespeare-char shape): minutes on one GPU."""
    return {
        "model": ModelConfig(block_size=256, n_layer=6, n_head=6, n_embd=384),
        "steps": 5000,
        "batch_size": 64,
        "lr": 1e-3,
        "warmup_steps": 100,
        "log_every": 10,
        "eval_every": 500,
        "eval_batches": 8,
        "checkpoint_every": 500,
        "corpus_max_bytes": 16 * 1024 * 1024,
    }


# A preset names RunConfig values only: the same model, batch and schedule on every framework.
PRESETS: dict[str, Callable[[], dict[str, typing.Any]]] = {"tiny": tiny, "small": small}

Config = typing.TypeVar("Config", bound=RunConfig)


def preset(name: str, kind: type[Config]) -> Config:
    try:
        values = PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}") from None
    return kind(preset=name, **values)


def apply_overrides(config: Config, assignments: Iterable[str]) -> Config:
    """Apply `field=value` / `model.field=value` strings, converting values to the field's type."""
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        if not sep:
            raise ValueError(f"--set expects KEY=VALUE, got {assignment!r}")
        path = key.strip().split(".")
        config = _replace_path(config, path, raw.strip(), key)
    return config


def _replace_path(obj: typing.Any, path: list[str], raw: str, key: str) -> typing.Any:
    hints = typing.get_type_hints(type(obj))
    name = path[0]
    if name not in hints:
        valid = ", ".join(f.name for f in dataclasses.fields(obj))
        raise ValueError(f"unknown setting {key!r}; fields here: {valid}")
    if len(path) > 1:
        child = getattr(obj, name)
        if not dataclasses.is_dataclass(child):
            raise ValueError(f"{key!r}: {name} has no sub-fields")
        return dataclasses.replace(obj, **{name: _replace_path(child, path[1:], raw, key)})
    return dataclasses.replace(obj, **{name: _convert(raw, hints[name], key)})


def _convert(raw: str, hint: typing.Any, key: str) -> typing.Any:
    args = typing.get_args(hint)
    if type(None) in args:  # Optional[X]
        if raw.lower() in ("", "none", "null"):
            return None
        hint = next(a for a in args if a is not type(None))
    try:
        if hint is bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if hint in (int, float, str):
            return hint(raw)
    except ValueError:
        raise ValueError(f"{key}: {raw!r} is not a valid {hint.__name__}") from None
    raise ValueError(f"{key} cannot be set from the command line")


def run_problems(config: RunConfig) -> list[str]:
    """What is wrong with the fields every trainer shares, each with what to change."""
    m = config.model
    problems = []
    if config.steps < 1:
        problems.append("steps must be >= 1")
    if m.n_embd % m.n_head:
        problems.append(f"model.n_embd {m.n_embd} must be a multiple of model.n_head {m.n_head}")
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
    return problems


def refuse(problems: list[str]) -> None:
    """Fail before any work starts, with every problem found."""
    if problems:
        raise ValueError("invalid configuration: " + "; ".join(problems))


def read_json_object(path: str, what: str) -> dict[str, typing.Any]:
    """A JSON object from a local path or gs://."""
    try:
        raw = storage_for(path).read_bytes(path)
    except (OSError, StorageError) as exc:
        raise ValueError(f"{what} {path}: {exc}") from None
    return parse_json_object(raw, f"{what} {path}")


def parse_json_object(raw: str | bytes, what: str) -> dict[str, typing.Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object")
    return data
