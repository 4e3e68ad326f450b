"""The same job on TPU instead of GPU, or on GPU instead of TPU: the estimate's alternatives.

A GPU job's TPU counterpart is the built-in JAX trainer (tpu_jax, replicated or FSDP-sharded):
it trains the same GPT with the same data, checkpoints and events as the PyTorch trainer, and a
composed tpu_jax job runs on Vertex and on the local stack alike. The built-in PyTorch/XLA
trainer (tpu_xla) runs the same model too, but JAX is the TPU's best-utilised framework, so it is
the one proposed; a tpu_xla job's GPU counterparts are found as a tpu_jax job's. A TPU job's
counterparts are the GPU strategies (ddp, zero2, fsdp, zero3).
"Comparable size" is aggregate peak throughput (devices x peak TFLOPS, ``throughput``) within
half to twice the job's; the alternative's duration is the job's scaled by that ratio and
discounted for several nodes by their network's scaling efficiency (see ``query``), so the
comparison is the same work on both sides. Memory is checked when the job's request has a model
section; the job's own scheduling strategy is kept where the alternative can use it (STANDARD
otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction

from vertexplan import catalog, checkpointing, memory
from vertexplan.composer.compose import Composition
from vertexplan.composer.request import JobRequest
from vertexplan.pricing import PriceTable
from vertexplan.recommend.query import ANY, SCHEDULES, Query, Recommendation, Workload
from vertexplan.recommend.search import recommend
from vertexplan.recommend.throughput import peak_tflops

COMPARABLE = (Fraction(1, 2), Fraction(2))
DEFAULT_LIMIT = 3
BASIS = ("the same work on the other kind of accelerator: aggregate peak throughput (devices x "
         "peak TFLOPS) within half to twice this job's, duration scaled by their ratio and, "
         "for several nodes, divided by a scaling efficiency set by the network between them "
         "(this job taken as one node; speed taken as proportional to peak TFLOPS, a first "
         "approximation), memory checked when the model's size is given. A GPU job's TPU "
         "counterpart is the built-in JAX trainer (tpu_jax): the same GPT, data, checkpoints "
         "and events as the PyTorch trainer, and it runs (on Vertex and on the local stack); "
         "the built-in PyTorch/XLA trainer (tpu_xla) runs the same model, but JAX is proposed "
         "as the better-utilised TPU framework. A job with its own command keeps "
         "it: that code must run on the TPU")


def _model(request: JobRequest) -> memory.ModelShape | None:
    section = request.model
    if not isinstance(section, Mapping) or not isinstance(section.get("parameters"), int):
        return None
    names = ("trainable_parameters", "largest_layer_parameters", "hidden_size", "layers",
             "sequence_length", "attention_heads", "vocab_size")
    values = {name: section[name] for name in names
              if isinstance(section.get(name), int) and not isinstance(section[name], bool)
              and section[name] > 0}
    precision = request.precision
    batch = request.batch if isinstance(request.batch, Mapping) else {}
    micro = batch.get("micro_batch_size") if isinstance(batch, Mapping) else None
    try:
        return memory.ModelShape(
            parameters=section["parameters"],
            dtype=precision if precision in memory.DTYPES else "fp32",
            micro_batch_size=micro if isinstance(micro, int) and micro > 0 else 1,
            activation_checkpointing=checkpointing.checkpointing_mode(
                section.get("activation_checkpointing")), **values)
    except (TypeError, ValueError):
        return None


def alternatives(composition: Composition, seconds: Fraction, table: PriceTable, *,
                 limit: int = DEFAULT_LIMIT) -> list[Recommendation]:
    """Up to ``limit`` cheapest comparable configurations on the other kind of accelerator,
    in the composed job's region, for ``seconds`` of its work; empty for CPU jobs, devices
    without a throughput figure, or when none is valid."""
    request, world_size = composition.request, composition.world_size
    pools = (composition.custom_job.get("jobSpec") or {}).get("workerPoolSpecs") or []
    if not pools or not isinstance(pools[0], Mapping) or seconds <= 0:
        return []
    try:
        shape = catalog.describe_machine_spec(pools[0].get("machineSpec") or {})
    except ValueError:
        return []
    peak = peak_tflops(shape.accelerator_type)
    if shape.kind not in ("gpu", "tpu") or peak is None or world_size < 1:
        return []
    aggregate = peak * world_size
    own = request.scheduling
    schedules = tuple(dict.fromkeys((own if own in SCHEDULES else "STANDARD", "STANDARD")))
    command = request.command
    query = Query(
        model=_model(request),
        strategy="tpu_jax" if shape.kind == "gpu" else ANY,
        region=request.region,
        workload=Workload(steps=1, step_time_s=Decimal(seconds.numerator) / seconds.denominator,
                          reference_device=shape.accelerator_type,
                          reference_devices=world_size),
        schedules=schedules,
        limit=limit * len(schedules),
        image_uri=str(request.image_uri or ""),
        command=tuple(str(c) for c in command) if isinstance(command, list) else (),
        throughput_range=(aggregate * COMPARABLE[0], aggregate * COMPARABLE[1]),
    )
    # One row per configuration (each shows every rate): its first, cheapest, schedule.
    seen: set[object] = set()
    found = []
    for result in recommend(query, table).results:
        if result.hardware not in seen:
            seen.add(result.hardware)
            found.append(result)
    return found[:limit]
