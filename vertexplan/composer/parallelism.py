"""Parallelism strategies: what each one adds to the container's arguments and environment.

The contract with the container (the built-in trainer or your own command):

* zero1/zero2/zero3: ``CP_DEEPSPEED_CONFIG_JSON`` holds the DeepSpeed JSON (compact, sorted
  keys). The built-in trainer also gets the values it must agree with as flags.
* fsdp: ``CP_FSDP_CONFIG_JSON`` holds ``{"mode": ..., "shard_size": N}`` (the keys of
  trainers.config.FSDPConfig).
* tensor/pipeline parallel degrees above 1: ``CP_PARALLELISM_JSON`` holds
  ``{"dp": D, "tp": T, "pp": P}``.
* tpu_xla: ``PJRT_DEVICE=TPU`` (PyTorch/XLA's runtime); tpu_jax adds nothing (JAX finds the TPU).
* ddp adds nothing to the environment.

With the built-in trainer (no command of your own) the arguments start with
``--strategy NAME`` followed by the flags below, then your arguments.
There is no shared filesystem between the control plane and the container, so configuration
travels in the CustomJob itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from vertexplan.composer import deepspeed_config

STRATEGIES: dict[str, str] = {
    "ddp": "PyTorch DistributedDataParallel (gloo on CPU, NCCL on GPU)",
    "fsdp": "PyTorch FSDP: full_shard, shard_grad_op or hybrid_shard",
    "zero1": "DeepSpeed ZeRO-1: optimizer states sharded",
    "zero2": "DeepSpeed ZeRO-2: optimizer states and gradients sharded",
    "zero3": "DeepSpeed ZeRO-3: parameters too (optional CPU offload)",
    "tpu_jax": "JAX on a Cloud TPU slice",
    "tpu_xla": "PyTorch/XLA on a Cloud TPU slice",
}
ZERO_STAGES = {"zero1": 1, "zero2": 2, "zero3": 3}
TPU_STRATEGIES = ("tpu_jax", "tpu_xla")
GPU_STRATEGIES = tuple(s for s in STRATEGIES if s not in TPU_STRATEGIES)
FSDP_MODES = ("full_shard", "shard_grad_op", "hybrid_shard")
PRECISIONS = ("fp32", "bf16", "fp16")
TPU_SHARDINGS = ("replicated", "fsdp")

# The launcher of the trainers that ship with this project (trainers/train.py).
TRAINER_COMMAND = ["python", "-m", "trainers.train"]
DEFAULT_TRAINER_ARGS = ["--preset", "tiny", "--steps", "300", "--checkpoint-every", "50"]

DEEPSPEED_ENV = "CP_DEEPSPEED_CONFIG_JSON"
FSDP_ENV = "CP_FSDP_CONFIG_JSON"
PARALLELISM_ENV = "CP_PARALLELISM_JSON"
PJRT_ENV = "PJRT_DEVICE"
GENERATED_ENV = (DEEPSPEED_ENV, FSDP_ENV, PARALLELISM_ENV, PJRT_ENV)

# What the built-in trainer can run today (trainers/parallel.py, trainers/deepspeed_config.py).
BUILTIN_PRECISIONS = ("fp32", "bf16")
BUILTIN_REFUSED_DS = {
    "optimizer": "the built-in trainer builds AdamW itself: set --lr and --set beta1=, "
                 "beta2=, weight_decay= in the arguments instead",
    "scheduler": "the built-in trainer sets the learning rate from the step (warmup, cosine): "
                 "set --set warmup_steps= in the arguments instead",
}


def dumps(value: Any) -> str:
    """The one JSON spelling of generated configuration, so a job exports the same way twice."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass
class Launch:
    """What a strategy adds to the job's container."""

    args: list[str] = field(default_factory=list)  # built-in trainer only, before the user's
    env: list[tuple[str, str]] = field(default_factory=list)
    deepspeed: dict[str, Any] | None = None
    fsdp: dict[str, Any] | None = None
    batch: deepspeed_config.Batch | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def error(self, key: str, message: str, suggestions: tuple[str, ...] = ()) -> None:
        self.errors.setdefault(key, []).append(message)
        if suggestions:
            self.suggestions[key] = suggestions


@dataclass(frozen=True)
class Topology:
    """The trainer processes of a job: who the strategy spreads the model over."""

    world_size: int
    devices_per_replica: int
    replicas: int
    tpu: bool


def _flag(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(float(value))


def section(request: dict[str, Any], name: str, out: Launch) -> dict[str, Any]:
    """A request section that must be an object; {} (and an error) when it is something else."""
    value = request.get(name)
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        out.error(name, f"{name} must be an object of settings, got {type(value).__name__}")
        return {}
    return value


def dims(request: dict[str, Any], topology: Topology, launch: Launch) -> tuple[int, int, int]:
    """(data, tensor, pipeline) degrees; errors keyed 'parallelism.<field>' when they do not fit."""
    section_ = section(request, "parallelism", launch)
    world = topology.world_size
    degrees = {}
    for name in ("tensor", "pipeline"):
        value = section_.get(name) or 1
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            launch.error(f"parallelism.{name}", f"parallelism.{name} must be a whole number of "
                         f"at least 1, got {value!r}", ("1",))
            value = 1
        degrees[name] = value
    t, p = degrees["tensor"], degrees["pipeline"]
    divisors = tuple(str(d) for d in range(1, world + 1) if world % d == 0)
    if world % (t * p):
        key = "parallelism.tensor" if t > 1 else "parallelism.pipeline"
        launch.error(key, f"tensor {t} x pipeline {p} = {t * p} does not divide the world size "
                     f"{world} (replicas x devices per replica): the degrees must multiply to "
                     "it with the data-parallel degree", divisors)
        return max(world, 1), 1, 1
    dp = world // (t * p)
    given = section_.get("data")
    if given not in (None, 0) and given != dp:
        launch.error("parallelism.data", f"data {given} x tensor {t} x pipeline {p} = "
                     f"{(given if isinstance(given, int) else 0) * t * p}, but the world size is "
                     f"{world}: leave data at 0 (derived) or set it to {dp}", (str(dp),))
    if t > 1 and topology.devices_per_replica % t and not topology.tpu:
        launch.error("parallelism.tensor", f"tensor parallel degree {t} should fit inside one "
                     f"replica ({topology.devices_per_replica} devices): its all-reduces run "
                     "every layer and need NVLink, not the network",
                     tuple(str(d) for d in range(1, topology.devices_per_replica + 1)
                           if topology.devices_per_replica % d == 0))
    return dp, t, p


def launch(request: dict[str, Any], topology: Topology, *, flags: bool, trainer: bool) -> Launch:
    """The arguments, environment and config files of the request's strategy.

    ``flags``: the composer writes the built-in trainer's command line (the request has no
    command of its own), so the strategy's flags go before the user's arguments.
    ``trainer``: the job runs this project's trainer, whose limits are checked. Otherwise only
    the environment is written and your command reads it.
    """
    out = Launch()
    strategy = request.get("strategy") or "ddp"
    precision = request.get("precision") or None
    if strategy not in STRATEGIES:
        out.error("strategy", f"{strategy!r} is not a strategy the composer knows: use "
                  f"{', '.join(STRATEGIES)}", tuple(STRATEGIES))
        return out
    if precision is not None and precision not in PRECISIONS:
        out.error("precision", f"precision {precision!r}: use {', '.join(PRECISIONS)}",
                  PRECISIONS)
        precision = None
    _check_sections(request, strategy, out)
    dp, t, p = dims(request, topology, out)
    batch, batch_errors, batch_suggestions = deepspeed_config.resolve_batch(
        section(request, "batch", out), dp)
    for key, messages in batch_errors.items():
        for message in messages:
            out.error(key, message, batch_suggestions.get(key, ()))
    out.batch = batch

    if flags:
        out.args = ["--strategy", strategy]
    if trainer:
        _builtin_limits(request, strategy, precision, t, p, out)
    if strategy == "fsdp":
        _fsdp(section(request, "fsdp", out), dp, topology, out, flags)
    if flags and batch is not None:
        out.args += ["--batch-size", str(batch.global_batch_size),
                     "--set", f"micro_batch_size={batch.micro_batch_size}"]
    if flags and precision is not None:
        out.args += ["--set", f"precision={precision}"]
    if strategy in ZERO_STAGES:
        _zero(section(request, "deepspeed", out), ZERO_STAGES[strategy], precision, out, flags)
    if t * p > 1:
        out.env.append((PARALLELISM_ENV, dumps({"dp": dp, "tp": t, "pp": p})))
    if strategy == "tpu_xla":
        out.env.append((PJRT_ENV, "TPU"))
    return out


def _check_sections(request: dict[str, Any], strategy: str, out: Launch) -> None:
    """A strategy's section given with another strategy is a mistake, not a silent default."""
    for section, owners in (("deepspeed", tuple(ZERO_STAGES)), ("fsdp", ("fsdp",)),
                            ("tpu", TPU_STRATEGIES)):
        if request.get(section) and strategy not in owners:
            out.error(section, f"{section} settings apply to strategy {' or '.join(owners)}, "
                      f"not {strategy}: remove them or change the strategy", owners)


def _builtin_limits(request: dict[str, Any], strategy: str, precision: str | None, t: int,
                    p: int, out: Launch) -> None:
    if strategy in TPU_STRATEGIES:
        out.error("strategy", f"{strategy} needs your own JAX or PyTorch/XLA image and command: "
                  "the built-in trainer (python -m trainers.train) runs PyTorch on GPUs and "
                  "CPUs", GPU_STRATEGIES)
    if precision == "fp16":
        out.error("precision", "the built-in trainer trains in fp32 or bf16, not fp16: choose "
                  "bf16 (A100, H100, H200, B200, L4 and TPUs have it) or run your own command",
                  BUILTIN_PRECISIONS)
    for name, degree in (("tensor", t), ("pipeline", p)):
        if degree > 1:
            out.error(f"parallelism.{name}", f"the built-in trainer trains with {name} "
                      f"parallel degree 1 only (got {degree}): use data parallelism (ddp, fsdp, "
                      "zero1-3) across all devices, or run your own command", ("1",))
    ds = request.get("deepspeed") if isinstance(request.get("deepspeed"), dict) else {}
    extra = ds.get("extra") if isinstance(ds.get("extra"), dict) else {}
    for key, why in BUILTIN_REFUSED_DS.items():
        if ds.get(key) or key in extra:
            out.error(f"deepspeed.{key}", why)


def _fsdp(options: dict[str, Any], dp: int, topology: Topology, out: Launch,
          flags: bool) -> None:
    mode = options.get("mode") or "full_shard"
    shard_size = options.get("shard_size") or 0
    if mode not in FSDP_MODES:
        out.error("fsdp.mode", f"fsdp mode {mode!r}: use {', '.join(FSDP_MODES)}", FSDP_MODES)
        return
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 0:
        out.error("fsdp.shard_size", f"fsdp.shard_size must be a whole number (0 = one "
                  f"replica's devices), got {shard_size!r}", ("0",))
        return
    if shard_size and mode != "hybrid_shard":
        out.error("fsdp.shard_size", f"fsdp.shard_size sets hybrid_shard's group size; with "
                  f"{mode} every rank shards the whole model: remove it or use hybrid_shard",
                  ("0",))
    if mode == "hybrid_shard":
        group = shard_size or topology.devices_per_replica or 1
        if dp % group:
            out.error("fsdp.shard_size", f"hybrid_shard groups of {group} devices do not "
                      f"divide the data-parallel size {dp}",
                      tuple(str(d) for d in range(1, dp + 1) if dp % d == 0))
    out.fsdp = {"mode": mode, "shard_size": shard_size}
    out.env.append((FSDP_ENV, dumps(out.fsdp)))
    if flags:
        out.args += ["--fsdp-mode", mode]
        if shard_size:
            out.args += ["--set", f"fsdp.shard_size={shard_size}"]


def _zero(options: dict[str, Any], stage: int, precision: str | None, out: Launch,
          flags: bool) -> None:
    for key, messages in deepspeed_config.check(options, stage=stage, precision=precision).items():
        for message in messages:
            out.error(key, message)
    out.deepspeed = deepspeed_config.build(options, stage=stage, precision=precision,
    batch=out.batch)
    out.env.insert(0, (DEEPSPEED_ENV, dumps(out.deepspeed)))
    if not flags:
        return
    clip = options.get("gradient_clipping")
    if isinstance(clip, int | float) and not isinstance(clip, bool):
        out.args += ["--set", f"grad_clip={_flag(clip)}"]
    if options.get("offload_optimizer"):
        out.args += ["--set", "offload_optimizer=true"]
    if options.get("offload_params"):
        out.args += ["--set", "offload_params=true"]


# -- reading a launch back (import) -----------------------------------------------------------

_SET_FLAGS = ("fsdp.shard_size", "micro_batch_size", "precision", "grad_clip",
              "offload_optimizer", "offload_params")


def parse_builtin_args(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """(request fields, the user's arguments) from the built-in trainer's generated arguments.

    None when ``args`` do not start with ``--strategy NAME``. The caller re-composes the request
    and keeps the reading only when it gives back the same arguments.
    """
    if len(args) < 2 or args[0] != "--strategy" or args[1] not in STRATEGIES:
        return None
    request: dict[str, Any] = {"strategy": args[1]}
    rest = args[2:]
    # The order ``launch`` writes them in.
    expected = ["--fsdp-mode", "--set:fsdp.shard_size", "--batch-size",
                *(f"--set:{name}" for name in _SET_FLAGS[1:])]
    position = 0
    while len(rest) >= 2:
        flag, value = rest[0], rest[1]
        key = flag
        if flag == "--set":
            key = f"--set:{value.partition('=')[0]}"
            value = value.partition("=")[2]
        if key not in expected[position:]:
            break
        position = expected.index(key) + 1
        if not _apply_flag(request, key, value):
            break
        rest = rest[2:]
    return request, rest


def _apply_flag(request: dict[str, Any], key: str, value: str) -> bool:
    try:
        if key == "--fsdp-mode":
            request.setdefault("fsdp", {})["mode"] = value
        elif key == "--set:fsdp.shard_size":
            request.setdefault("fsdp", {})["shard_size"] = int(value)
        elif key == "--batch-size":
            request.setdefault("batch", {})["global_batch_size"] = int(value)
        elif key == "--set:micro_batch_size":
            request.setdefault("batch", {})["micro_batch_size"] = int(value)
        elif key == "--set:precision":
            request["precision"] = value
        elif key == "--set:grad_clip":
            request.setdefault("deepspeed", {})["gradient_clipping"] = float(value)
        elif key in ("--set:offload_optimizer", "--set:offload_params"):
            request.setdefault("deepspeed", {})[key.partition(":")[2]] = value == "true"
    except ValueError:
        return False
    return True


def parse_env(env: dict[str, str]) -> dict[str, Any]:
    """Request fields read back from the generated environment variables."""
    request: dict[str, Any] = {}
    raw = env.get(DEEPSPEED_ENV)
    if raw is not None:
        try:
            ds = json.loads(raw)
        except ValueError:
            ds = None
        if isinstance(ds, dict):
            stage, section, batch, precision = deepspeed_config.parse(ds)
            if stage in (1, 2, 3):
                request["strategy"] = f"zero{stage}"
                request["deepspeed"] = section
                if batch:
                    request["batch"] = batch
                if precision:
                    request["precision"] = precision
    raw = env.get(FSDP_ENV)
    if raw is not None and "strategy" not in request:
        try:
            fsdp = json.loads(raw)
        except ValueError:
            fsdp = None
        if isinstance(fsdp, dict):
            request["strategy"] = "fsdp"
            request["fsdp"] = fsdp
    raw = env.get(PARALLELISM_ENV)
    if raw is not None:
        try:
            degrees = json.loads(raw)
        except ValueError:
            degrees = None
        if isinstance(degrees, dict):
            request["parallelism"] = {"tensor": degrees.get("tp", 1),
                                      "pipeline": degrees.get("pp", 1)}
    return request
