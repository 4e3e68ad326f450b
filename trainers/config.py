"""Training configuration: one dataclass, presets as small functions, `key=value` overrides.

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

from trainers.parallel import model_fit_problems, resolve_dims
from trainers.storage import StorageError, storage_for

FSDP_MODES = ("full_shard", "shard_grad_op", "hybrid_shard")
ZERO_STAGES = {"zero1": 1, "zero2": 2, "zero3": 3}


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
class FSDPConfig:
    """FSDP2 (`fully_shard`) settings: `--fsdp-config PATH` (a JSON object with these keys),
    `--fsdp-mode`, or `--set fsdp.shard_size=8`."""

    # full_shard: parameters are re-sharded after forward (least memory, a second all-gather
    # in backward); shard_grad_op: kept gathered until backward ends (ZeRO-2-like);
    # hybrid_shard: sharded within a group of `shard_size` ranks, replicated across groups.
    mode: str = "full_shard"
    shard_size: int = 0  # hybrid_shard group size; 0 = the processes of one node (its GPUs)


@dataclass(frozen=True)
class TrainConfig:
    preset: str = "tiny"
    strategy: str = "ddp"
    model: ModelConfig = field(default_factory=ModelConfig)

    # Parallelism degrees (torchtitan's parallel dims): dp x tp x pp must equal WORLD_SIZE.
    # With tp or pp above 1, ddp or fsdp runs over the dp dimension of one device mesh
    # (pp, dp, tp), tp innermost: the ranks of a tensor-parallel group share a node.
    dp: int = 0  # data-parallel degree; 0 = WORLD_SIZE / (tp x pp)
    tp: int = 1  # tensor-parallel degree: ranks that split every layer's matrices by heads
    pp: int = 1  # pipeline-parallel degree: ranks that hold consecutive groups of layers
    pp_schedule: str = "1f1b"  # gpipe | 1f1b | interleaved_1f1b (pp > 1)
    pp_virtual_stages: int = 1  # pipeline stages per pp rank; above 1: interleaved_1f1b
    sequence_parallel: bool = False  # tp > 1: norms and dropout split along the sequence too
    fsdp: FSDPConfig = field(default_factory=FSDPConfig)
    # The DeepSpeed JSON read from --deepspeed-config (zero1/2/3); None = built from this config.
    deepspeed: dict[str, typing.Any] | None = None
    offload_optimizer: bool = False  # zero1/2/3: optimizer states and step on the CPU
    offload_params: bool = False  # zero3: parameters on the CPU between uses

    steps: int = 300
    seed: int = 1337
    batch_size: int = 16  # GLOBAL batch, in sequences, summed over all data-parallel ranks
    # Sequences per rank per forward pass; 0 = the whole rank batch. With pp > 1 it is the
    # pipeline's micro-batch, and 0 = one micro-batch per pipeline stage.
    micro_batch_size: int = 0
    precision: str = "fp32"  # fp32 | bf16 (autocast on GPU)

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
    # Write checkpoints in the background (ddp, fsdp): training goes on while they are written,
    # and they are committed at the first step boundary where every rank has finished.
    async_checkpoint: bool = False

    data: str | None = None  # a text file; None = the Python standard library's sources
    corpus_max_bytes: int = 4 * 1024 * 1024

    device: str = "auto"  # auto (a GPU when there is one) | cpu | cuda
    cpu_threads: int = 1  # torch threads per process on CPU (replicas often share a few cores)
    collective_timeout_s: int = 600  # how long a rank waits for the others before failing

    def to_dict(self) -> dict[str, typing.Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, typing.Any]) -> TrainConfig:
        values = dict(data)
        values["model"] = ModelConfig(**values.get("model", {}))
        values["fsdp"] = FSDPConfig(**values.get("fsdp", {}))
        return cls(**values)


def tiny() -> TrainConfig:
    """~0.12M parameters: two CPU processes run 300 steps in seconds. The test and demo preset."""
    return TrainConfig(preset="tiny")


def small() -> TrainConfig:
    """~10.8M parameters (nanoGPT's Shakespeare-char shape): minutes on one GPU."""
    return TrainConfig(
        preset="small",
        model=ModelConfig(block_size=256, n_layer=6, n_head=6, n_embd=384),
        steps=5000,
        batch_size=64,
        lr=1e-3,
        warmup_steps=100,
        log_every=10,
        eval_every=500,
        eval_batches=8,
        checkpoint_every=500,
        corpus_max_bytes=16 * 1024 * 1024,
    )


PRESETS: dict[str, Callable[[], TrainConfig]] = {"tiny": tiny, "small": small}


def preset(name: str) -> TrainConfig:
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}") from None


def apply_overrides(config: TrainConfig, assignments: Iterable[str]) -> TrainConfig:
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


def validate(config: TrainConfig, world_size: int) -> None:
    """Fail before any work starts, with a message that says what to change."""
    dims = resolve_dims(config.dp, config.tp, config.pp, world_size)  # raises on its own
    m = config.model
    problems = []
    if config.steps < 1:
        problems.append("steps must be >= 1")
    if config.batch_size < 1 or config.batch_size % dims.dp:
        problems.append(
            f"batch_size {config.batch_size} (global) must be a positive multiple of the "
            f"data-parallel size {dims.dp}"
        )
    else:
        per_rank = config.batch_size // dims.dp
        if config.micro_batch_size < 0 or (
            config.micro_batch_size and per_rank % config.micro_batch_size
        ):
            problems.append(
                f"micro_batch_size {config.micro_batch_size} must divide the per-rank batch "
                f"{per_rank}"
            )
    if m.n_embd % m.n_head:
        problems.append(f"model.n_embd {m.n_embd} must be a multiple of model.n_head {m.n_head}")
    problems += model_fit_problems(
        dims,
        n_head=m.n_head,
        n_layer=m.n_layer,
        vocab_size=m.vocab_size,
        block_size=m.block_size,
        schedule=config.pp_schedule,
        virtual_stages=config.pp_virtual_stages,
        sequence_parallel=config.sequence_parallel,
        rank_batch=config.batch_size // dims.dp if config.batch_size % dims.dp == 0 else 0,
        micro_batch_size=config.micro_batch_size,
    )
    if config.device not in ("auto", "cpu", "cuda"):
        problems.append(f"device must be auto, cpu or cuda, not {config.device!r}")
    if config.precision not in ("fp32", "bf16"):
        problems.append(f"precision must be fp32 or bf16, not {config.precision!r}")
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


# CP_PARALLELISM_JSON's keys and their types: the degrees, and how the pipeline runs.
PARALLEL_KEYS: dict[str, type] = {
    "dp": int,
    "tp": int,
    "pp": int,
    "pp_schedule": str,
    "pp_virtual_stages": int,
    "sequence_parallel": bool,
}


def parallel_from_json(data: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """The settings of a CP_PARALLELISM_JSON object ({"dp": D, "tp": T, "pp": P, ...})."""
    unknown = sorted(set(data) - set(PARALLEL_KEYS))
    if unknown:
        raise ValueError(
            f"parallelism: unknown keys {', '.join(unknown)}; valid: {', '.join(PARALLEL_KEYS)}"
        )
    for key, value in data.items():
        expected = PARALLEL_KEYS[key]
        if type(value) is not expected:
            raise ValueError(f"parallelism: {key} must be a {expected.__name__}, not {value!r}")
    return dict(data)


def fsdp_from_json(data: dict[str, typing.Any]) -> FSDPConfig:
    """An --fsdp-config file: a JSON object with FSDPConfig's keys."""
    defaults = FSDPConfig()
    valid = sorted(f.name for f in dataclasses.fields(FSDPConfig))
    for key, value in data.items():
        if key not in valid:
            raise ValueError(f"FSDP config: unknown key {key!r}; valid: {', '.join(valid)}")
        expected = type(getattr(defaults, key))
        if type(value) is not expected:
            raise ValueError(f"FSDP config: {key} must be a {expected.__name__}, not {value!r}")
    return FSDPConfig(**data)
