"""Parallelism strategies: what each one adds to the container's arguments and environment.

The contract with the container (the built-in trainer or your own command):

* zero1/zero2/zero3: ``CP_DEEPSPEED_CONFIG_JSON`` holds the DeepSpeed JSON (compact, sorted
  keys). The built-in trainer also gets the values it must agree with as flags.
* fsdp: ``CP_FSDP_CONFIG_JSON`` holds ``{"mode": ..., "shard_size": N}`` (the keys of
  trainers.torch.config.FSDPConfig).
* tensor/pipeline parallel degrees above 1: ``CP_PARALLELISM_JSON`` holds
  ``{"dp": D, "tp": T, "pp": P}`` (plus ``pp_schedule``, ``pp_virtual_stages`` and
  ``sequence_parallel`` when the request sets them), and the NCCL settings below. With the
  built-in trainer and several GPUs per replica the arguments carry ``--nproc-per-node N``: each
  replica runs torchrun with one process per GPU, its rendezvous (node rank, master address and
  port) read from CLUSTER_SPEC, so tensor-parallel groups (consecutive ranks) stay inside a
  replica and talk over NVLink.
* tpu_xla: ``PJRT_DEVICE=TPU`` (PyTorch/XLA's runtime); tpu_jax adds nothing (JAX finds the TPU).
* ddp adds nothing to the environment.
* ``model.activation_checkpointing`` selective or full: the built-in trainers get
  ``--activation-checkpointing MODE`` (PyTorch/XLA: full only; none, the default, adds
  nothing); your own command gets nothing (the setting is then the memory plan's and the step
  time's only).

With the built-in trainer (no command of your own) the arguments start with
``--strategy NAME`` followed by the flags below, then your arguments. On a TPU slice the
built-in trainer is the strategy's own entrypoint (``trainer_command``): tpu_jax runs
``python -m trainers.jax --mesh DATA,FSDP,TENSOR`` (the chips of the slice, all data-parallel
unless the job's parallelism or tpu.sharding says otherwise), tpu_xla runs the PyTorch trainer
on the XLA device (``python -m trainers.xla --mesh DATA,FSDP``, PJRT_DEVICE=TPU: an SPMD mesh
over the chips, data-parallel or, with tpu.sharding fsdp, FSDP); neither takes ``--strategy``.
There is no shared filesystem between the control plane and the container, so configuration
travels in the CustomJob itself.
"""

from __future__ import annotations

import json
import math
from typing import Any

from vertexplan import checkpointing
from vertexplan.composer.deepspeed_config import deepspeed_errors, deepspeed_json, resolve_batch
from vertexplan.composer.launch import Launch, Topology
from vertexplan.composer.request import JobRequest, blank
from vertexplan.composer.tpu_meshes import jax_mesh, xla_mesh

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
# The TPU strategies' own entrypoints: each runs in its own image (Dockerfile.tpu-jax,
# Dockerfile.tpu-xla), JAX with jax[tpu], PyTorch/XLA with the torch that torch_xla pins.
JAX_TRAINER_COMMAND = ["python", "-m", "trainers.jax"]
XLA_TRAINER_COMMAND = ["python", "-m", "trainers.xla"]
TPU_TRAINER_COMMANDS = {"tpu_jax": JAX_TRAINER_COMMAND, "tpu_xla": XLA_TRAINER_COMMAND}
BUILTIN_COMMANDS = (TRAINER_COMMAND, JAX_TRAINER_COMMAND, XLA_TRAINER_COMMAND)
DEFAULT_TRAINER_ARGS = ["--preset", "tiny", "--steps", "300", "--checkpoint-every", "50"]

NPROC_FLAG = "--nproc-per-node"
CHECKPOINTING_FLAG = "--activation-checkpointing"

DEEPSPEED_ENV = "CP_DEEPSPEED_CONFIG_JSON"
FSDP_ENV = "CP_FSDP_CONFIG_JSON"
PARALLELISM_ENV = "CP_PARALLELISM_JSON"
PJRT_ENV = "PJRT_DEVICE"
# NCCL for a tensor x pipeline x data parallel job on GPUs. Tensor parallelism all-reduces
# every layer inside a replica: peer-to-peer over NVLink only (never staged through host
# memory or PCIe); a rank whose peer died fails its collective instead of waiting forever, so
# the replica exits and Vertex restarts the job; the caching allocator does not hold tensors
# used on NCCL's streams longer than needed (torchtitan sets the same).
NCCL_ENV = (
    ("NCCL_P2P_LEVEL", "NVL"),
    ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
    ("TORCH_NCCL_AVOID_RECORD_STREAMS", "1"),
)
GENERATED_ENV = (DEEPSPEED_ENV, FSDP_ENV, PARALLELISM_ENV, PJRT_ENV, *(n for n, _ in NCCL_ENV))
PIPELINE_SCHEDULES = ("gpipe", "1f1b", "interleaved_1f1b")
# The request's parallelism fields beside the degrees, and CP_PARALLELISM_JSON's names for them.
PARALLEL_OPTIONS = {
    "pipeline_schedule": "pp_schedule",
    "virtual_stages": "pp_virtual_stages",
    "sequence_parallel": "sequence_parallel",
}

# What the built-in trainer can run today (trainers/torch/parallel.py,
# trainers/torch/strategies/deepspeed_config.py).
BUILTIN_PRECISIONS = ("fp32", "bf16")
BUILTIN_REFUSED_DS = {
    "optimizer": "the built-in trainer builds AdamW itself: set --lr and --set beta1=, "
                 "beta2=, weight_decay= in the arguments instead",
    "scheduler": "the built-in trainer sets the learning rate from the step (warmup, cosine): "
                 "set --set warmup_steps= in the arguments instead",
}


def trainer_command(strategy: Any) -> list[str]:
    """The built-in trainer's command line for a strategy."""
    return list(TPU_TRAINER_COMMANDS.get(strategy, TRAINER_COMMAND))


def dumps(value: Any) -> str:
    """The one JSON spelling of generated configuration, so a job exports the same way twice."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _flag(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(float(value))


def section(value: Any, name: str, out: Launch) -> dict[str, Any]:
    """A request section that must be an object; {} (and an error) when it is something else."""
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        out.error(name, f"{name} must be an object of settings, got {type(value).__name__}")
        return {}
    return value


def divisors(n: int, most: int = 32) -> tuple[str, ...]:
    """n's divisors (those found by trying up to 10000), smallest first, at most ``most``: a
    request may name a huge replica count, so never n steps."""
    small = [d for d in range(1, min(math.isqrt(n), 10_000) + 1) if n % d == 0] if n > 0 else []
    every = sorted({*small, *(n // d for d in small)})
    return tuple(str(d) for d in every[:most])


def dims(request: JobRequest, topology: Topology, launch: Launch) -> tuple[int, int, int]:
    """(data, tensor, pipeline) degrees; errors keyed 'parallelism.<field>' when they do not fit."""
    section_ = section(request.parallelism, "parallelism", launch)
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
    if world % (t * p):
        key = "parallelism.tensor" if t > 1 else "parallelism.pipeline"
        launch.error(key, f"tensor {t} x pipeline {p} = {t * p} does not divide the world size "
                     f"{world} (replicas x devices per replica): the degrees must multiply to "
                     "it with the data-parallel degree", divisors(world))
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


def launch(request: JobRequest, topology: Topology) -> Launch:
    """What the job's chief runs and the arguments, environment and config files of the
    request's strategy for it.

    With no command of its own the chief runs the built-in trainer, whose command line the
    composer writes: the strategy's flags go before the user's arguments, and the trainer's
    limits are checked. A command of its own reads the environment only.
    """
    command = request.command or []
    # image_entrypoint: run the image's own ENTRYPOINT (no command), e.g. an imported job. A
    # Python package runs its module in Google's prebuilt image: no command of its own either.
    entrypoint = bool(request.image_entrypoint) or request.python_package is not None
    out = Launch(entrypoint=entrypoint, writes_command=not entrypoint and blank(command),
                 builtin=not entrypoint and (blank(command) or command in BUILTIN_COMMANDS))
    _strategy_launch(request, topology, out, flags=out.writes_command, trainer=out.builtin)
    strategy = request.strategy
    own = trainer_command(strategy)
    if out.builtin and not out.writes_command and command != own and strategy in STRATEGIES:
        out.error("command", f"{' '.join(command)} is the built-in trainer of another "
                  f"strategy; {strategy} runs {' '.join(own)}: leave command empty and the "
                  "composer writes it", (" ".join(own),))
    return out


def _strategy_launch(request: JobRequest, topology: Topology, out: Launch, *, flags: bool,
                     trainer: bool) -> None:
    """``flags``: the composer writes the built-in trainer's command line, so the strategy's
    flags go before the user's arguments. ``trainer``: the job runs this project's trainer,
    whose limits are checked. Otherwise only the environment is written."""
    strategy, precision = request.strategy, request.precision
    if strategy not in STRATEGIES:
        out.error("strategy", f"{strategy!r} is not a strategy the composer knows: use "
                  f"{', '.join(STRATEGIES)}", tuple(STRATEGIES))
        return
    if precision is not None and precision not in PRECISIONS:
        out.error("precision", f"precision {precision!r}: use {', '.join(PRECISIONS)}",
                  PRECISIONS)
        precision = None
    _check_sections(request, strategy, out)
    dp, t, p = dims(request, topology, out)
    batch, batch_errors, batch_suggestions = resolve_batch(section(request.batch, "batch", out),
                                                           dp)
    for key, messages in batch_errors.items():
        for message in messages:
            out.error(key, message, batch_suggestions.get(key, ()))
    out.batch = batch

    if flags and strategy == "tpu_jax":
        out.args = ["--mesh", jax_mesh(section(request.tpu, "tpu", out), dp, t, p, out)]
    elif flags and strategy == "tpu_xla":
        out.args = ["--mesh", xla_mesh(section(request.tpu, "tpu", out), dp, t, p, out)]
    elif flags and strategy not in TPU_STRATEGIES:
        out.args = ["--strategy", strategy]
        if topology.devices_per_replica > 1 and not topology.tpu:
            # One process per GPU, written out rather than left to "auto" (which counts the
            # GPUs it sees): the replica runs the world size the batch was sized for on
            # Vertex and on the local emulator alike, where there are no GPUs to count. It is
            # also the launcher of a tensor x pipeline job: the trainer starts torchrun with
            # one process per GPU, so tensor-parallel groups stay inside the replica.
            out.args += [NPROC_FLAG, str(topology.devices_per_replica)]
    if trainer:
        _builtin_limits(request, strategy, precision, t, p, out)
    if strategy == "fsdp":
        _fsdp(section(request.fsdp, "fsdp", out), dp, topology, out, flags)
    if flags and batch is not None:
        out.args += ["--batch-size", str(batch.global_batch_size)]
        if strategy != "tpu_jax":
            out.args += ["--set", f"micro_batch_size={batch.micro_batch_size}"]
    if flags and precision is not None:
        out.args += (["--precision", precision] if strategy == "tpu_jax"
                     else ["--set", f"precision={precision}"])
    checkpointing = _checkpointing(request, strategy, trainer, out)
    if flags and checkpointing != "none":
        out.args += [CHECKPOINTING_FLAG, checkpointing]
    if strategy in ZERO_STAGES:
        _zero(section(request.deepspeed, "deepspeed", out), ZERO_STAGES[strategy], precision,
              out, flags)
    if t * p > 1:
        degrees: dict[str, Any] = {"dp": dp, "tp": t, "pp": p}
        degrees.update(_parallel_options(section(request.parallelism, "parallelism", out), t, p,
                                         out))
        out.env.append((PARALLELISM_ENV, dumps(degrees)))
        if not topology.tpu:
            out.env += list(NCCL_ENV)
    if strategy == "tpu_xla":
        out.env.append((PJRT_ENV, "TPU"))


def _checkpointing(request: JobRequest, strategy: str, trainer: bool, out: Launch) -> str:
    """The model's activation checkpointing mode ("none" when the request says nothing)."""
    model = request.model if isinstance(request.model, dict) else {}
    try:
        mode = checkpointing.checkpointing_mode(model.get("activation_checkpointing"))
    except ValueError as exc:
        out.error("model.activation_checkpointing", str(exc), checkpointing.CHECKPOINTING)
        return "none"
    if trainer and mode == "selective" and strategy == "tpu_xla":
        out.error("model.activation_checkpointing", "the built-in PyTorch/XLA trainer "
                  "recomputes whole blocks only (XLA's tracing bypasses per-operator "
                  "policies): choose full or none, or run your own command", ("full", "none"))
    if mode == "selective" and strategy == "zero3" and trainer:
        out.error("model.activation_checkpointing", "the built-in trainer refuses zero3 with "
                  "selective checkpointing (ZeRO-3 gathers each layer's weights inside its "
                  "forward, which per-operator recomputation cannot replay): choose full, or "
                  "zero2 or fsdp", ("full",))
    return mode


def _check_sections(request: JobRequest, strategy: str, out: Launch) -> None:
    """A strategy's section given with another strategy is a mistake, not a silent default."""
    for section, given, owners in (("deepspeed", request.deepspeed, tuple(ZERO_STAGES)),
                                   ("fsdp", request.fsdp, ("fsdp",)),
                                   ("tpu", request.tpu, TPU_STRATEGIES)):
        if given and strategy not in owners:
            out.error(section, f"{section} settings apply to strategy {' or '.join(owners)}, "
                      f"not {strategy}: remove them or change the strategy", owners)


def _builtin_limits(request: JobRequest, strategy: str, precision: str | None, t: int,
                    p: int, out: Launch) -> None:
    batch = out.batch
    if strategy == "tpu_jax" and batch is not None and batch.gradient_accumulation_steps > 1:
        given = section(request.batch, "batch", out)
        key = ("batch.micro_batch_size" if "gradient_accumulation_steps" not in given
               else "batch.gradient_accumulation_steps")
        out.error(key, f"the JAX trainer takes one global batch per step (split over the "
                  f"mesh) and does not accumulate gradients, but this batch accumulates "
                  f"{batch.gradient_accumulation_steps} micro batches: leave micro_batch_size "
                  "and gradient_accumulation_steps out and size global_batch_size to the chips",
                  ())
    if precision == "fp16":
        out.error("precision", "the built-in trainer trains in fp32 or bf16, not fp16: choose "
                  "bf16 (A100, H100, H200, B200, L4 and TPUs have it) or run your own command",
                  BUILTIN_PRECISIONS)
    if t * p > 1 and strategy in ZERO_STAGES:
        key = "parallelism.tensor" if t > 1 else "parallelism.pipeline"
        out.error(key, f"the built-in trainer combines tensor/pipeline parallelism with ddp or "
                  f"fsdp over the data-parallel ranks, not {strategy}: DeepSpeed pairs ZeRO with "
                  "them only for Megatron models and its own PipelineModule. Use fsdp (it "
                  "shards like ZeRO-3) or run your own command", ("ddp", "fsdp"))
    ds = request.deepspeed if isinstance(request.deepspeed, dict) else {}
    extra = ds.get("extra") if isinstance(ds.get("extra"), dict) else {}
    for key, why in BUILTIN_REFUSED_DS.items():
        if ds.get(key) or key in extra:
            out.error(f"deepspeed.{key}", why)


def _parallel_options(section_: dict[str, Any], t: int, p: int, out: Launch) -> dict[str, Any]:
    """The pipeline schedule, stages per pipeline rank and sequence parallelism, checked."""
    found: dict[str, Any] = {}
    schedule = section_.get("pipeline_schedule")
    if schedule is not None:
        if schedule not in PIPELINE_SCHEDULES:
            out.error("parallelism.pipeline_schedule", f"pipeline_schedule {schedule!r}: use "
                      f"{', '.join(PIPELINE_SCHEDULES)}", PIPELINE_SCHEDULES)
        elif p == 1:
            out.error("parallelism.pipeline_schedule", "pipeline_schedule applies with a "
                      "pipeline degree above 1", ())
        else:
            found["pipeline_schedule"] = schedule
    virtual = section_.get("virtual_stages")
    if virtual is not None:
        if isinstance(virtual, bool) or not isinstance(virtual, int) or virtual < 1:
            out.error("parallelism.virtual_stages", f"virtual_stages must be a whole number of "
                      f"at least 1, got {virtual!r}", ("1", "2"))
        elif virtual > 1 and found.get("pipeline_schedule") != "interleaved_1f1b":
            out.error("parallelism.virtual_stages", "several stages per pipeline rank run "
                      "with pipeline_schedule interleaved_1f1b", ("interleaved_1f1b",))
        elif virtual > 1:
            found["virtual_stages"] = virtual
    if found.get("pipeline_schedule") == "interleaved_1f1b" and "virtual_stages" not in found:
        out.error("parallelism.pipeline_schedule", "interleaved_1f1b runs 2 or more stages per "
                  "pipeline rank: set virtual_stages", ("2",))
    sequence = section_.get("sequence_parallel")
    if sequence is not None:
        if not isinstance(sequence, bool):
            out.error("parallelism.sequence_parallel", "sequence_parallel must be true or false",
                      ("true", "false"))
        elif sequence and t == 1:
            out.error("parallelism.sequence_parallel", "sequence_parallel splits the tensor-"
                      "parallel ranks' work: it needs a tensor degree above 1", ())
        elif sequence:
            found["sequence_parallel"] = True
    return {PARALLEL_OPTIONS[k]: v for k, v in found.items()}


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
    for key, messages in deepspeed_errors(options, stage=stage, precision=precision).items():
        for message in messages:
            out.error(key, message)
    out.deepspeed = deepspeed_json(options, stage=stage, precision=precision, batch=out.batch)
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
