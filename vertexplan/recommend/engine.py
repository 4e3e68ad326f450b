"""The cheapest configurations that train a model in time: enumerate, fit, price, rank, compose.

Given a model's size, a strategy, a region and how long the training takes, ``recommend``

1. enumerates the hardware the catalogue allows for the strategy: GPU machines with each listed
   GPU count on 1 to ``max_nodes`` nodes (ddp, fsdp, zero1-3), or TPU slice machines with each
   topology and cloud-tpu hosts (tpu_jax, tpu_xla);
2. keeps the hardware the memory plan (``vertexplan.memory``, as the composer plans it) says the
model
   fits on, with the first strategy that fits when the query says "any" (ddp, zero2, fsdp,
   zero3: least communication first), and for TPU strategies replicated before sharded;
3. prices each with ``vertexplan.pricing.job_estimate`` in the region for its duration, at every
scheduling strategy
   the query allows where it is valid: STANDARD always, SPOT where a spot rate applies (not on
   TPU Pod slices), FLEX_START where every pool has an L4/A100/H100/H200/B200 and the timeout is
   at most 7 days;
4. ranks by total cost, ties by fewer devices, keeps the cheapest host machine for each
   device/count/node combination (N1 and G2 offer several hosts for the same GPUs), and keeps
   only configurations ``vertexplan.composer.compose`` accepts as they are.

How long a configuration takes:

- ``hours``: the same wall-clock hours on every configuration (a fixed-time run);
- ``steps`` x ``step_time_s`` measured on ``reference_devices`` devices of ``reference_device``:
  each configuration's step time is the reference step time scaled by the ratio of aggregate
  peak throughput, reference (devices x peak TFLOPS) / configuration (devices x peak TFLOPS),
  from ``vertexplan.recommend.throughput``. That is perfect linear scaling at peak speed: real jobs
  lose some of it to communication (more so across nodes and under ZeRO-3/FSDP) and reach a
  different share of peak on each device, so treat the durations as optimistic, the ranking as
  a shortlist, and measure a step on the chosen configuration before a long run.
  ``deadline_hours`` drops configurations that would take longer.

Pure apart from the composer's read of Django settings (the default image); no ORM.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from vertexplan import composer, memory
from vertexplan.catalog.enums import FLEX_START_MAX_TIMEOUT_S
from vertexplan.pricing import (
    STRATEGY_RATES,
    PriceTable,
    PricingError,
    Totals,
    default_table,
    job_estimate,
)
from vertexplan.pricing.money import cost_of_seconds
from vertexplan.recommend.hardware import Hardware, gpu_hardware, tpu_hardware
from vertexplan.recommend.throughput import PEAK_THROUGHPUT, peak_tflops

SCHEDULES = ("STANDARD", "SPOT", "FLEX_START")
GPU_STRATEGIES = ("ddp", "fsdp", "zero1", "zero2", "zero3")
TPU_STRATEGIES = ("tpu_jax", "tpu_xla")
ANY = "any"
STRATEGY_CHOICES = (ANY, *GPU_STRATEGIES, *TPU_STRATEGIES)
# "any": the GPU strategies in order of how much they communicate.
ANY_ORDER = ("ddp", "zero2", "fsdp", "zero3")
TPU_SHARDINGS = ("replicated", "fsdp")
DEFAULT_MAX_NODES = 8
MAX_NODES = 64
DEFAULT_LIMIT = 10
# Candidates composed before giving up: the memory plan here and the composer's agree, so
# refusals are rare; this bounds the work if they ever do not.
MAX_COMPOSED = 300
# A timeout with room for start-up, checkpoint restores and restarts beyond the estimate.
TIMEOUT_MARGIN = Fraction(5, 4)
# What a job needs when the built-in trainer cannot run it (TPU programs, fp16): the presets'
# placeholders, to be replaced by the user's own.
OWN_IMAGE = "us-docker.pkg.dev/my-project/training/trainer:latest"
OWN_COMMAND = ("python", "-m", "train")
BUILTIN_PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class Workload:
    """How long the training takes: ``hours`` anywhere, or ``steps`` of ``step_time_s``
    measured on ``reference_devices`` x ``reference_device``."""

    hours: Decimal | None = None
    steps: int | None = None
    step_time_s: Decimal | None = None
    reference_device: str | None = None
    reference_devices: int = 1
    deadline_hours: Decimal | None = None

    def __post_init__(self) -> None:
        if (self.hours is None) == (self.steps is None):
            raise ValueError("give hours, or steps with step_time_s and reference_device")
        if self.steps is not None:
            if self.step_time_s is None or self.reference_device is None:
                raise ValueError("steps need step_time_s and reference_device")
            if peak_tflops(self.reference_device) is None:
                raise ValueError(f"no throughput figure for {self.reference_device!r}; use "
                                 + ", ".join(PEAK_THROUGHPUT))

    def seconds_on(self, hardware: Hardware) -> Fraction | None:
        """Wall-clock seconds on ``hardware``; None for a device without a throughput figure."""
        if self.hours is not None:
            return Fraction(self.hours) * 3600
        assert self.steps is not None and self.step_time_s is not None
        reference = peak_tflops(self.reference_device)
        mine = peak_tflops(hardware.device)
        if reference is None or mine is None:
            return None
        step = Fraction(self.step_time_s) * reference * self.reference_devices / (
            mine * hardware.devices)
        return self.steps * step

    def timeout_hours(self, seconds: Fraction) -> int:
        """The timeout a recommended job gets: the deadline, else the estimate plus a quarter."""
        if self.deadline_hours is not None:
            return math.ceil(self.deadline_hours)
        return max(math.ceil(seconds * TIMEOUT_MARGIN / 3600), 1)


@dataclass(frozen=True)
class Query:
    model: memory.ModelShape | None  # None: memory is not checked (alternatives of a job)
    strategy: str
    region: str
    workload: Workload
    schedules: tuple[str, ...] = SCHEDULES
    max_nodes: int = DEFAULT_MAX_NODES
    limit: int = DEFAULT_LIMIT
    image_uri: str = ""
    command: tuple[str, ...] = ()
    # Only hardware whose aggregate peak TFLOPS lies in [low, high] (the "comparable size" of
    # an alternative); None: any.
    throughput_range: tuple[Fraction, Fraction] | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGY_CHOICES:
            raise ValueError(f"strategy {self.strategy!r}: use {', '.join(STRATEGY_CHOICES)}")
        unknown = [s for s in self.schedules if s not in SCHEDULES]
        if unknown or not self.schedules:
            raise ValueError(f"schedules {unknown}: use {', '.join(SCHEDULES)}")
        if not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(f"max_nodes must be 1 to {MAX_NODES}")

    @property
    def tpu(self) -> bool:
        return self.strategy in TPU_STRATEGIES

    def strategies(self) -> tuple[str, ...]:
        return ANY_ORDER if self.strategy == ANY else (self.strategy,)


@dataclass
class Recommendation:
    hardware: Hardware
    strategy: str
    tpu_sharding: str | None
    scheduling_strategy: str
    seconds: Fraction
    hourly: Totals  # micro-dollars per hour at each rate (None where the rate does not apply)
    totals: Totals  # micro-dollars for the duration at each rate
    memory_plan: memory.MemoryPlan | None
    request: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    rank: int = 0

    @property
    def rate(self) -> str:
        return STRATEGY_RATES[self.scheduling_strategy]

    @property
    def total(self) -> int:
        value = self.totals.get(STRATEGY_RATES[self.scheduling_strategy])  # type: ignore[arg-type]
        assert value is not None
        return value

    @property
    def hours(self) -> Decimal:
        return Decimal(self.seconds.numerator) / Decimal(self.seconds.denominator) / 3600

    @property
    def label(self) -> str:
        sharding = f" ({self.tpu_sharding})" if self.tpu_sharding else ""
        return (f"{self.hardware.describe()}, {self.strategy}{sharding}, "
                f"{self.scheduling_strategy}")

    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.total, self.hardware.devices, SCHEDULES.index(self.scheduling_strategy),
                self.hardware.machine_type)


@dataclass
class Recommendations:
    results: list[Recommendation]
    considered: int  # hardware configurations looked at
    reason: str  # why there are no results ("" when there are)
    assumptions: list[str]
    table_source: str
    table_retrieved: str | None
    rejected: dict[str, int] = field(default_factory=dict)


# -- the search -----------------------------------------------------------------------------------


@dataclass
class _Fit:
    strategy: str
    tpu_sharding: str | None
    plan: memory.MemoryPlan | None


def _fit(query: Query, hardware: Hardware) -> tuple[_Fit | None, memory.MemoryPlan | None]:
    """The first strategy (and TPU sharding) the model fits with; else the closest miss."""
    if query.model is None:
        return _Fit(query.strategies()[0], "replicated" if query.tpu else None, None), None
    closest = None
    for strategy in query.strategies():
        for sharding in TPU_SHARDINGS if query.tpu else (None,):
            plan = hardware.memory_plan(query.model, strategy, tpu_sharding=sharding or
                                        "replicated")
            if plan.fits:
                return _Fit(strategy, sharding, plan), None
            if closest is None or plan.total_gib - (plan.device_memory_gib or 0) < \
                    closest.total_gib - (closest.device_memory_gib or 0):
                closest = plan
    return None, closest


def _hardware(query: Query) -> Iterator[Hardware]:
    found: Iterable[Hardware] = tpu_hardware() if query.tpu else gpu_hardware(query.max_nodes)
    for hardware in found:
        if query.throughput_range is not None:
            peak = peak_tflops(hardware.device)
            low, high = query.throughput_range
            if peak is None or not low <= peak * hardware.devices <= high:
                continue
        yield hardware


def _same_devices(candidate: Recommendation) -> tuple[object, ...]:
    """Configurations that differ only in their host machine (N1 and G2 sizes)."""
    hw = candidate.hardware
    return (hw.device, hw.shape.devices_per_vm, hw.vms, hw.tpu_topology,
            candidate.scheduling_strategy)


def _host_preference(candidate: Recommendation) -> tuple[bool, int]:
    # A host that holds what DeepSpeed's estimate says each node needs comes first.
    plan = candidate.memory_plan
    return (plan is not None and plan.host_fits is False, candidate.total)


def _request(query: Query, candidate: Recommendation, timeout_hours: int) -> tuple[
        dict[str, Any], list[str]]:
    hw = candidate.hardware
    request: dict[str, Any] = {
        "name": f"{candidate.strategy}-{hw.machine_type}-x{hw.nodes}".replace("_", "-"),
        "region": query.region,
        "strategy": candidate.strategy,
        "chief": hw.chief(),
        "scheduling_strategy": candidate.scheduling_strategy,
        "timeout_hours": timeout_hours,
    }
    notes: list[str] = []
    if hw.nodes > 1:
        request["workers"] = {"replica_count": hw.nodes - 1}
    if candidate.strategy == "fsdp":
        request["fsdp"] = {"mode": "full_shard"}
    if candidate.tpu_sharding == "fsdp":
        request["tpu"] = {"sharding": "fsdp"}
    model = query.model
    if model is not None:
        request["precision"] = model.dtype
        request["model"] = _model_section(model)
        if model.micro_batch_size != 1:
            request["batch"] = {"micro_batch_size": model.micro_batch_size}
    needs_own = query.tpu or (model is not None and model.dtype not in BUILTIN_PRECISIONS)
    if query.image_uri:
        request["image_uri"] = query.image_uri
    if query.command:
        request["command"] = list(query.command)
    if needs_own and not (query.image_uri and query.command):
        request.setdefault("image_uri", OWN_IMAGE)
        request.setdefault("command", list(OWN_COMMAND))
        notes.append("needs your own image and command (the built-in trainer runs PyTorch in "
                     "fp32 or bf16 on GPUs and CPUs): replace the placeholders")
    return request, notes


def _model_section(model: memory.ModelShape) -> dict[str, Any]:
    section: dict[str, Any] = {"parameters": model.parameters}
    for name in ("trainable_parameters", "largest_layer_parameters", "hidden_size", "layers",
                 "sequence_length", "attention_heads", "vocab_size"):
        value = getattr(model, name)
        if value:
            section[name] = value
    if model.activation_checkpointing:
        section["activation_checkpointing"] = True
    return section


def _priced(query: Query, fit: _Fit, hardware: Hardware, seconds: Fraction,
            hourly: Totals) -> Iterator[Recommendation]:
    totals = hourly.map(lambda rate: cost_of_seconds(rate, seconds))
    timeout = query.workload.timeout_hours(seconds)
    for schedule in query.schedules:
        if totals.get(STRATEGY_RATES[schedule]) is None:  # type: ignore[arg-type]
            continue  # spot on a TPU Pod slice, flex without a DWS GPU
        if schedule == "FLEX_START" and timeout * 3600 > FLEX_START_MAX_TIMEOUT_S:
            continue
        yield Recommendation(hardware=hardware, strategy=fit.strategy,
                             tpu_sharding=fit.tpu_sharding, scheduling_strategy=schedule,
                             seconds=seconds, hourly=hourly, totals=totals,
                             memory_plan=fit.plan, request={})


def recommend(query: Query, table: PriceTable | None = None) -> Recommendations:
    """The cheapest configurations for ``query``, best first (see the module docstring)."""
    table = default_table() if table is None else table
    rejected: Counter[str] = Counter()
    closest: tuple[Hardware, memory.MemoryPlan] | None = None
    fastest: tuple[Hardware, Fraction] | None = None
    best: dict[tuple[object, ...], Recommendation] = {}
    considered = 0
    deadline = query.workload.deadline_hours
    for hardware in _hardware(query):
        considered += 1
        fit, miss = _fit(query, hardware)
        if fit is None:
            rejected["memory"] += 1
            if miss is not None and (closest is None or miss.total_gib - (
                    miss.device_memory_gib or 0) < closest[1].total_gib - (
                    closest[1].device_memory_gib or 0)):
                closest = (hardware, miss)
            continue
        seconds = query.workload.seconds_on(hardware)
        if seconds is None:
            rejected["no throughput figure"] += 1
            continue
        if deadline is not None and seconds > Fraction(deadline) * 3600:
            rejected["deadline"] += 1
            if fastest is None or seconds < fastest[1]:
                fastest = (hardware, seconds)
            continue
        try:
            estimate = job_estimate.hourly({"jobSpec": hardware.custom_job_spec()}, query.region,
                                    table)
        except PricingError:
            rejected["not priced in the region"] += 1
            continue
        for candidate in _priced(query, fit, hardware, seconds, estimate.hourly):
            key = _same_devices(candidate)
            if key not in best or _host_preference(candidate) < _host_preference(best[key]):
                best[key] = candidate
    results = _composed(query, sorted(best.values(), key=Recommendation.sort_key), table,
                        rejected)
    reason = "" if results else _reason(query, considered, rejected, closest, fastest)
    return Recommendations(results=results, considered=considered, reason=reason,
                           assumptions=assumptions(query), table_source=table.source,
                           table_retrieved=table.newest_retrieved, rejected=dict(rejected))


def _composed(query: Query, ranked: list[Recommendation], table: PriceTable,
              rejected: Counter[str]) -> list[Recommendation]:
    """The first ``limit`` candidates the composer accepts, priced as composed."""
    results: list[Recommendation] = []
    for candidate in ranked[:MAX_COMPOSED]:
        request, notes = _request(query, candidate,
                                  query.workload.timeout_hours(candidate.seconds))
        composition = composer.compose(request)
        if not composition.ok:
            rejected["refused by the composer"] += 1
            continue
        # Price the job exactly as the estimate endpoint will: the CustomJob as composed.
        try:
            estimate = job_estimate.hourly(composition.custom_job, query.region, table)
        except PricingError:
            rejected["not priced in the region"] += 1
            continue
        hourly = estimate.hourly
        results.append(replace(
            candidate, request=composition.request or request, notes=notes, hourly=hourly,
            totals=hourly.map(lambda rate, s=candidate.seconds: cost_of_seconds(rate, s)),
            memory_plan=composition.memory_plan or candidate.memory_plan))
        if len(results) >= query.limit:
            break
    results.sort(key=Recommendation.sort_key)
    for rank, result in enumerate(results, start=1):
        result.rank = rank
    return results


def _reason(query: Query, considered: int, rejected: Counter[str],
            closest: tuple[Hardware, memory.MemoryPlan] | None,
            fastest: tuple[Hardware, Fraction] | None) -> str:
    what = f"strategy {query.strategy}" + ("" if query.tpu else
                                          f" on up to {query.max_nodes} nodes")
    if not considered:
        return f"no hardware in the catalogue matches {what}"
    parts = [f"none of the {considered} configurations for {what} can be recommended"]
    if rejected["memory"] and query.model is not None:
        text = (f"{rejected['memory']} do not fit {query.model.parameters:,} parameters "
                f"({query.model.dtype}) in device memory")
        if closest is not None:
            hw, plan = closest
            text += (f"; the closest, {hw.describe()} with {plan.strategy}, needs "
                     f"{plan.total_gib:.1f} GB per device of its {plan.device_memory_gib:g} GB")
        parts.append(text)
    if rejected["deadline"]:
        text = (f"{rejected['deadline']} fit but take longer than the "
                f"{query.workload.deadline_hours} h deadline")
        if fastest is not None:
            hours = float(fastest[1] / 3600)
            text += f"; the fastest, {fastest[0].describe()}, takes {hours:.1f} h"
        parts.append(text)
    for why in ("not priced in the region", "no throughput figure", "refused by the composer"):
        if rejected[why]:
            where = f" ({query.region})" if why.endswith("region") else ""
            parts.append(f"{rejected[why]} {why}{where}")
    hints = []
    if rejected["memory"]:
        hints.append("more nodes (max_nodes)" if not query.tpu else "a larger topology")
        if query.strategy not in (ANY, "zero3", "fsdp") and not query.tpu:
            hints.append("strategy zero3, fsdp or any")
        hints.append("activation checkpointing or a smaller micro batch")
    if rejected["deadline"]:
        hints.append("a later deadline")
    text = "; ".join(parts)
    return text + (f". Try {', '.join(hints)}." if hints else ".")


def assumptions(query: Query) -> list[str]:
    """What a reader must know about the figures, stated with every answer."""
    notes = ["cost = the composed job's hourly price in the region (machines, accelerators, "
             "boot disks) x the duration; FLEX_START is priced at its ceiling, the on-demand "
             "rate"]
    workload = query.workload
    if workload.hours is not None:
        notes.append(f"every configuration runs {workload.hours} h (a fixed-time run)")
    else:
        notes.append(
            f"duration = {workload.steps} steps x {workload.step_time_s} s measured on "
            f"{workload.reference_devices} x {workload.reference_device}, scaled by aggregate "
            "peak 16-bit throughput (devices x peak TFLOPS): perfect scaling at peak speed, "
            "an optimistic first approximation; measure a step on the chosen configuration")
    if query.model is None:
        notes.append("memory not checked: no model size given")
    else:
        notes.append("memory per device from the memory plan (DeepSpeed's model-state "
                     "estimates; activations only with hidden_size, layers and "
                     "sequence_length)")
    notes.append("only the cheapest host machine is kept for each device, count and node "
                 "combination")
    return notes
