"""Whether a CustomJob fits the machine the emulator runs it on, decided before any replica
starts.

On Vertex every replica has its own VM; here every process of every replica shares this one
machine. A job whose replicas cannot fit in its memory would swap the machine to a standstill
or be killed by the kernel midway, taking the stack around it down too. So the runner asks
refusal() first, and a job that cannot fit ends FAILED at once with a google.rpc error naming
the figures and the way to run it scaled down; no process is started for it.

The estimate is a floor, never a guess: it is made only for the product's own trainers
(`python -m trainers.train | trainers.jax | trainers.xla`) whose model is named by their
arguments (a shipped shape by `--model-config NAME`, or the byte-level GPT by `--preset` and
`--set model.*`), and counts only what such a process must hold: fp32 weights, gradients and
AdamW's two moments (16 bytes a parameter), divided as the strategy shards them, plus a Python
interpreter with PyTorch loaded. Activations, data and buffers come on top. A team's own code
has no plan the emulator can read: it is never refused.

The machine is its physical memory (or --machine-memory-gb) less a headroom for the kernel and
the stack itself (--memory-headroom-gb; by default a tenth of the machine, at least 2 GB). Not
the memory free right now: a job that fits once other jobs end is not one that can never fit.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.trainer_models import flags_and_sets, positive, preset_model
from localvertex.config import Settings
from localvertex.replicas.environment import replica_argv, tpu_hosts

GIB = 2**30
# fp32 weights (4) + gradients (4) + AdamW's first and second moments (4 + 4): what the trainer
# keeps per parameter whatever its matmul precision (bf16 autocasts the products, not these).
STATE_BYTES = 16
# A Python interpreter with PyTorch imported: what each trainer process holds before any model.
PROCESS_BASE_GIB = 0.25
DEFAULT_HEADROOM_SHARE = 0.10
MIN_HEADROOM_GIB = 2.0
# google.rpc.Code FAILED_PRECONDITION: the job as given cannot run on this machine. Not
# RESOURCE_EXHAUSTED, which the control plane reads as a stockout and retries elsewhere.
CODE_FAILED_PRECONDITION = 9

TRAINER_MODULES = ("trainers.train", "trainers.jax", "trainers.xla")
# Pools 2 and 3 (Reduction Server, evaluators) run no trainer rank: the trainers exit 0 there.
TRAINER_POOLS = 2
SHAPES_DIR = Path("trainers") / "torch" / "models" / "shapes"
# A shipped shape's bare name; anything else (a path, gs://) is a team's file, not read here.
_SHAPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
SCALE_DOWN_WAYS = ("`vcp presets run SLUG --scale-down`, or \"Run scaled down locally\" on the "
                   "compose page")


@dataclass(frozen=True)
class Model:
    name: str          # "llama-3-8b", or "a byte-level GPT (32 layers, width 4096)"
    parameters: int
    scaled: str        # the arguments of its local variant


@dataclass(frozen=True)
class Pool:
    name: str          # workerpool0
    replicas: int
    processes: int     # trainer processes per replica
    per_process_gib: float

    @property
    def per_replica_gib(self) -> float:
        return self.processes * self.per_process_gib

    @property
    def total_gib(self) -> float:
        return self.replicas * self.per_replica_gib


@dataclass(frozen=True)
class Estimate:
    model: Model
    strategy: str
    pools: tuple[Pool, ...]

    @property
    def total_gib(self) -> float:
        return sum(p.total_gib for p in self.pools)

    @property
    def processes(self) -> int:
        return sum(p.replicas * p.processes for p in self.pools)


# -- reading a pool's command line -----------------------------------------------------------

def _trainer_module(argv: list[str]) -> str | None:
    return argv[2] if len(argv) >= 3 and argv[1] == "-m" and argv[2] in TRAINER_MODULES \
        else None


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# -- the model's size ------------------------------------------------------------------------

def hf_parameters(config: dict[str, Any]) -> int | None:
    """A Hugging Face decoder's parameter count from its config.json (the text decoder only:
    a VLM's vision tower is left out of the floor)."""
    text = config.get("text_config")
    values = {**text, **config} if isinstance(text, dict) else config
    h, layers, vocab, inter, heads = (positive(values.get(k)) for k in (
        "hidden_size", "num_hidden_layers", "vocab_size", "intermediate_size",
        "num_attention_heads"))
    if not (h and layers and vocab and inter and heads):
        return None
    kv = positive(values.get("num_key_value_heads")) or heads
    head_dim = positive(values.get("head_dim")) or h // heads
    attention = 2 * h * heads * head_dim + 2 * h * kv * head_dim  # q and o; k and v
    mlp = 3 * h * inter  # gate, up and down projections
    # The output layer is its own matrix only where the config says so (a floor: transformers'
    # default differs by model type, Gemma's ties them unsaid).
    embeddings = vocab * h * (2 if values.get("tie_word_embeddings") is False else 1)
    return layers * (attention + mlp + 2 * h) + embeddings + h


def model_of(workdir: Path, flags: dict[str, str], sets: dict[str, str]) -> Model | None:
    """The model the trainer's arguments build, or None when they do not name one this can
    read (a team's own config.json, weights to start from)."""
    shape = flags.get("--model-config")
    if shape is not None:
        if not _SHAPE_NAME.fullmatch(shape) or shape.endswith(".json"):
            return None
        try:
            config = json.loads((workdir / SHAPES_DIR / f"{shape}.json").read_text())
        except (OSError, ValueError):
            return None
        count = hf_parameters(config) if isinstance(config, dict) else None
        if count is None:
            return None
        scaled = f"{shape}-scaled"
        local = (f"--model-config {scaled}" if (workdir / SHAPES_DIR / f"{scaled}.json").is_file()
                 else "a smaller --model-config")
        return Model(shape, count, local)
    if "--init-from" in flags:
        return None
    preset = preset_model(flags, sets)
    if preset is None:
        return None
    dims = preset.dims
    return Model(f"a byte-level GPT ({dims['n_layer']} layers, width {dims['n_embd']})",
                 preset.parameters, "--preset tiny without the --set model.* overrides")


# -- how a strategy divides the states -------------------------------------------------------

def state_bytes_per_process(parameters: int, strategy: str, world: int, tp: int, pp: int,
                            shard_group: int) -> float | None:
    """Model-state bytes one trainer process holds (DeepSpeed's accounting at fp32): tp and pp
    split the parameters; ZeRO and FSDP shard what their stage says over the data-parallel
    ranks (hybrid_shard over `shard_group` of them). None for a strategy not known here."""
    split = max(tp * pp, 1)
    local = parameters / split
    dp = max(world // split, 1)
    weights, grads, optimizer = 4 * local, 4 * local, 8 * local
    if strategy in ("ddp", "single", "tp_pp"):
        return weights + grads + optimizer
    if strategy == "zero1":
        return weights + grads + optimizer / dp
    if strategy in ("zero2", "shard_grad_op"):
        return weights + (grads + optimizer) / dp
    if strategy in ("fsdp", "full_shard", "zero3", "tp_pp_fsdp", "tpu"):
        return (weights + grads + optimizer) / dp
    if strategy == "hybrid_shard":
        return (weights + grads + optimizer) / max(min(shard_group, dp), 1)
    return None


def _sharding(flags: dict[str, str], env: dict[str, str]) -> tuple[str, int]:
    """The strategy as it shards ("fsdp" becomes its mode) and hybrid_shard's group size."""
    strategy = flags.get("--strategy", "ddp")
    if strategy != "fsdp":
        return strategy, 0
    fsdp = _json_object(env.get("CP_FSDP_CONFIG_JSON"))
    mode = flags.get("--fsdp-mode") or str(fsdp.get("mode") or "full_shard")
    return mode, positive(fsdp.get("shard_size")) or 0


def _pool_env(pool_spec) -> dict[str, str]:
    task = pool_spec.python_package_spec if pool_spec.WhichOneof("task") == \
        "python_package_spec" else pool_spec.container_spec
    return {var.name: var.value for var in task.env}


@dataclass(frozen=True)
class _Reading:
    """What one pool's command line says."""

    index: int
    pool_spec: Any
    flags: dict[str, str]
    sets: dict[str, str]
    model: Model
    processes: int
    strategy: str      # as it shards: ddp, zero2, full_shard, hybrid_shard, tpu...
    shard_group: int


def _read_pool(settings: Settings, index: int, pool_spec) -> _Reading | None:
    argv = replica_argv(pool_spec)
    module = _trainer_module(argv)
    if module is None:
        return None
    flags, sets = flags_and_sets(argv[3:])
    model = model_of(settings.workdir, flags, sets)
    if model is None:
        return None
    if module == "trainers.train":
        processes = positive(flags.get("--nproc-per-node")) or 1
        strategy, group = _sharding(flags, _pool_env(pool_spec))
    else:
        # A TPU slice: one JAX process per VM; PyTorch/XLA plays the whole slice in one.
        processes = tpu_hosts(pool_spec.machine_spec) if module == "trainers.jax" else 1
        strategy, group = "tpu", 0
    return _Reading(index, pool_spec, flags, sets, model, processes, strategy,
                    group or processes)


def estimate(settings: Settings, job_spec) -> Estimate | None:
    """The floor of what the job's trainer replicas hold at once, or None when it runs code
    whose memory this cannot read (then it is never refused)."""
    readings = []
    for index, pool_spec in enumerate(job_spec.worker_pool_specs[:TRAINER_POOLS]):
        if pool_spec.replica_count < 1:
            continue
        reading = _read_pool(settings, index, pool_spec)
        if reading is None:
            return None
        readings.append(reading)
    if not readings:
        return None
    # Every trainer rank of the job, as CLUSTER_SPEC counts them (pools 0 and 1).
    world = sum(r.pool_spec.replica_count * r.processes for r in readings)
    pools = []
    for r in readings:
        dims = _json_object(_pool_env(r.pool_spec).get("CP_PARALLELISM_JSON"))
        tp = positive(r.sets.get("tp")) or positive(dims.get("tp")) or 1
        pp = positive(r.sets.get("pp")) or positive(dims.get("pp")) or 1
        states = state_bytes_per_process(r.model.parameters, r.strategy, world, tp, pp,
                                         r.shard_group)
        if states is None:
            return None
        pools.append(Pool(f"workerpool{r.index}", r.pool_spec.replica_count, r.processes,
                          states / GIB + PROCESS_BASE_GIB))
    return Estimate(readings[0].model, readings[0].strategy, tuple(pools))


# -- the machine and the decision ------------------------------------------------------------

def machine_gib(settings: Settings) -> float:
    """This machine's memory: --machine-memory-gb, else the physical memory the kernel counts."""
    if settings.machine_memory_gib is not None:
        return settings.machine_memory_gib
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB


def headroom_gib(settings: Settings, machine: float) -> float:
    if settings.memory_headroom_gib is not None:
        return settings.memory_headroom_gib
    return max(MIN_HEADROOM_GIB, DEFAULT_HEADROOM_SHARE * machine)


def _gb(value: float) -> str:
    return f"{value:,.1f} GB"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def message(found: Estimate, machine: float, headroom: float) -> str:
    """The job's error: the figures and the way to run it here first (a failure's headline
    shows the start of it), then what the estimate counts."""
    pools = "; ".join(
        f"{p.name}: {_count(p.replicas, 'replica', 'replicas')} x {_gb(p.per_replica_gib)}"
        + (f", {p.processes} processes x {_gb(p.per_process_gib)}" if p.processes > 1 else "")
        for p in found.pools)
    model = found.model
    return (
        f"Too big for this machine: the job needs an estimated {_gb(found.total_gib)} in all "
        f"({pools}) and the machine has {_gb(machine)}, "
        f"{_gb(max(machine - headroom, 0.0))} for jobs after a {_gb(headroom)} headroom; the "
        f"local emulator runs every replica on this one machine. No replica was started. Run "
        f"it scaled down: {model.scaled} (a preset's local variant: {SCALE_DOWN_WAYS}), or with "
        f"fewer replicas or processes; or submit it to Vertex. The estimate is a floor for "
        f"{_count(found.processes, 'trainer process', 'trainer processes')} of {model.name} "
        f"({model.parameters / 1e9:,.2f}B parameters, {found.strategy}): fp32 weights, "
        f"gradients and AdamW states, 16 bytes a parameter as the strategy shards them, plus "
        f"{PROCESS_BASE_GIB:g} GB of Python and PyTorch a process.")


def refusal(settings: Settings, job_spec) -> str | None:
    """Why the job cannot run on this machine, or None (it fits, or its memory is unknown)."""
    found = estimate(settings, job_spec)
    if found is None:
        return None
    machine = machine_gib(settings)
    headroom = headroom_gib(settings, machine)
    if found.total_gib <= machine - headroom:
        return None
    return message(found, machine, headroom)
