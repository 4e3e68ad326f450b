"""The recommender's answers in words: why nothing could be recommended, and what the figures
assume."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from vertexplan import memory
from vertexplan.recommend.hardware import Hardware
from vertexplan.recommend.query import ANY, Query


def why_none(query: Query, considered: int, rejected: Counter[str],
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
             "boot disks) x the duration; FLEX_START only where a published FLEX_START rate "
             "prices it (never at the on-demand rate)"]
    workload = query.workload
    if workload.hours is not None:
        notes.append(f"every configuration runs {workload.hours} h (a fixed-time run)")
    else:
        notes.append(
            f"duration = {workload.steps} steps x {workload.step_time_s} s measured on "
            f"{workload.reference_devices} x {workload.reference_device}, scaled by aggregate "
            "peak 16-bit throughput (devices x peak TFLOPS) and discounted for each added node "
            "by its network (1 / (1 + p x (nodes - 1)), p from 3% on A4/A3 Ultra to 25% on "
            "N1/G2): a first approximation; measure a step on the chosen configuration")
        notes.append("devices without the model's precision are never proposed (no bf16 on "
                     "T4, V100, P100 or P4; no fp16 on TPUs)")
    if query.model is None:
        notes.append("memory not checked: no model size given")
    else:
        notes.append("memory per device from the memory plan (DeepSpeed's model-state "
                     "estimates; activations only with hidden_size, layers and "
                     "sequence_length)")
    notes.append("only the cheapest host machine is kept for each device, count and node "
                 "combination")
    return notes
