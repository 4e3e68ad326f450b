"""The cheapest configurations that train a model in time: enumerate, fit, price, rank, compose.

Given a model's size, a strategy, a region and how long the training takes (``query``),
``recommend``

1. enumerates the hardware the catalogue allows for the strategy: GPU machines with each listed
   GPU count on 1 to ``max_nodes`` nodes (ddp, fsdp, zero1-3), or TPU slice machines with each
   topology and cloud-tpu hosts (tpu_jax, tpu_xla);
2. keeps the hardware the memory plan (``vertexplan.memory``, as the composer plans it) says the
   model fits on, with the first strategy that fits when the query says "any" (ddp, zero2, fsdp,
   zero3: least communication first), and for TPU strategies replicated before sharded;
3. prices each with ``vertexplan.pricing.job_estimate`` in the region for its duration, at every
   scheduling strategy the query allows where it is valid: STANDARD always, SPOT where a spot
   rate applies (not on TPU Pod slices), FLEX_START where every pool has an
   L4/A100/H100/H200/B200 and the timeout is at most 7 days;
4. ranks by total cost, ties by fewer devices, keeps the cheapest host machine for each
   device/count/node combination (N1 and G2 offer several hosts for the same GPUs), and keeps
   only configurations ``vertexplan.composer.compose`` accepts as they are.

Why nothing was found, and what every answer assumes, are worded in ``explain``.
Pure apart from the composer's read of Django settings (the default image); no ORM.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
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
    flex,
    job_estimate,
)
from vertexplan.pricing.money import cost_of_seconds
from vertexplan.recommend.explain import assumptions, why_none
from vertexplan.recommend.hardware import Hardware, gpu_hardware, tpu_hardware
from vertexplan.recommend.query import Query, Recommendation, Recommendations
from vertexplan.recommend.throughput import peak_tflops, supports_precision

TPU_SHARDINGS = ("replicated", "fsdp")
# Candidates composed before giving up: the memory plan here and the composer's agree, so
# refusals are rare; this bounds the work if they ever do not.
MAX_COMPOSED = 300
# What a job needs when the built-in trainer cannot run it (TPU programs, fp16): the presets'
# placeholders, to be replaced by the user's own.
OWN_IMAGE = "us-docker.pkg.dev/my-project/training/trainer:latest"
OWN_COMMAND = ("python", "-m", "train")
BUILTIN_PRECISIONS = ("fp32", "bf16")


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
    # The built-in trainers: PyTorch on GPUs and CPUs, JAX (tpu_jax) and PyTorch/XLA
    # (tpu_xla) on TPU slices, all in fp32 or bf16.
    needs_own = model is not None and model.dtype not in BUILTIN_PRECISIONS
    if query.image_uri:
        request["image_uri"] = query.image_uri
    if query.command:
        request["command"] = list(query.command)
    if needs_own and not (query.image_uri and query.command):
        request.setdefault("image_uri", OWN_IMAGE)
        request.setdefault("command", list(OWN_COMMAND))
        notes.append("needs your own image and command (the built-in trainers run PyTorch in "
                     "fp32 or bf16 on GPUs and CPUs, JAX or PyTorch/XLA on TPU slices): "
                     "replace the placeholders")
    return request, notes


def _model_section(model: memory.ModelShape) -> dict[str, Any]:
    section: dict[str, Any] = {"parameters": model.parameters}
    for name in ("trainable_parameters", "largest_layer_parameters", "hidden_size", "layers",
                 "sequence_length", "attention_heads", "vocab_size"):
        value = getattr(model, name)
        if value:
            section[name] = value
    if model.activation_checkpointing != "none":
        section["activation_checkpointing"] = model.activation_checkpointing
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


def recommend(query: Query, table: PriceTable | None = None,
              flex_rates: flex.FlexRates | None = None) -> Recommendations:
    """The cheapest configurations for ``query``, best first (see the module docstring)."""
    table = default_table() if table is None else table
    flex_rates = flex.shipped() if flex_rates is None else flex_rates
    rejected: Counter[str] = Counter()
    closest: tuple[Hardware, memory.MemoryPlan] | None = None
    fastest: tuple[Hardware, Fraction] | None = None
    best: dict[tuple[object, ...], Recommendation] = {}
    considered = 0
    deadline = query.workload.deadline_hours
    for hardware in _hardware(query):
        considered += 1
        if query.model is not None and not supports_precision(hardware.device,
                                                              query.model.dtype):
            rejected[f"no {query.model.dtype} on the device"] += 1
            continue
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
                                           table, flex_rates)
        except PricingError:
            rejected["not priced in the region"] += 1
            continue
        for candidate in _priced(query, fit, hardware, seconds, estimate.hourly):
            key = _same_devices(candidate)
            if key not in best or _host_preference(candidate) < _host_preference(best[key]):
                best[key] = candidate
    results = _composed(query, sorted(best.values(), key=Recommendation.sort_key), table,
                        rejected, flex_rates)
    reason = "" if results else why_none(query, considered, rejected, closest, fastest)
    return Recommendations(results=results, considered=considered, reason=reason,
                           assumptions=assumptions(query), table_source=table.source,
                           table_retrieved=table.newest_retrieved, rejected=dict(rejected))


def _composed(query: Query, ranked: list[Recommendation], table: PriceTable,
              rejected: Counter[str], flex_rates: flex.FlexRates) -> list[Recommendation]:
    """The first ``limit`` candidates the composer accepts, priced as composed."""
    results: list[Recommendation] = []
    for candidate in ranked[:MAX_COMPOSED]:
        request, notes = _request(query, candidate,
                                  query.workload.timeout_hours(candidate.seconds))
        composition = composer.compose(composer.JobRequest.from_dict(request))
        if not composition.ok:
            rejected["refused by the composer"] += 1
            continue
        # Price the job exactly as the estimate endpoint will: the CustomJob as composed.
        try:
            estimate = job_estimate.hourly(composition.custom_job, query.region, table,
                                           flex_rates)
        except PricingError:
            rejected["not priced in the region"] += 1
            continue
        hourly = estimate.hourly
        results.append(replace(
            candidate, request=composition.request.to_dict(), notes=notes, hourly=hourly,
            totals=hourly.map(lambda rate, s=candidate.seconds: cost_of_seconds(rate, s)),
            memory_plan=composition.memory_plan or candidate.memory_plan))
        if len(results) >= query.limit:
            break
    results.sort(key=Recommendation.sort_key)
    for rank, result in enumerate(results, start=1):
        result.rank = rank
    return results
