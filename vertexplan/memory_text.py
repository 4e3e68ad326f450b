"""A memory plan's figures as people read them: sizes in GB, MB or KB, and the one line a
message gives a plan ("37.2 GB per device (parameters 4.4 GB, ...) on a 40 GB device")."""

from __future__ import annotations

from vertexplan.memory import MemoryPlan


def size_text(gib: float | None) -> str:
    """A size in GiB as people read it: '37.2 GB', '477 MB', '12.0 KB', in the GiB-based units
    DeepSpeed prints as GB. Below 1 GB in MB (a toy model's or a well-sharded state's
    per-device share is MB, and '0.00 GB' would say it is nothing); 0 only when it is 0."""
    if gib is None:
        return "not estimated"
    if gib == 0:
        return "0 GB"
    for unit in ("GB", "MB", "KB"):
        if gib >= 1 or unit == "KB":
            break
        gib *= 1024
    if gib < 0.01:
        return "under 0.01 KB"
    return f"{_three_figures(gib)} {unit}"


def _three_figures(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def describe(memory: MemoryPlan) -> str:
    """One line for messages: '37.2 GB per device (parameters 4.4 GB, ...) on a 40 GB device'."""
    parts = [f"parameters {size_text(memory.parameters_gib)}",
             f"gradients {size_text(memory.gradients_gib)}",
             f"optimizer states {size_text(memory.optimizer_gib)}"]
    if memory.gathered_gib:
        parts.append(f"gathered layer {size_text(memory.gathered_gib)}")
    if memory.activations_gib is not None:
        parts.append(f"activations {size_text(memory.activations_gib)}")
    if memory.reserve_gib:
        parts.append(f"runtime {size_text(memory.reserve_gib)}")
    text = f"{size_text(memory.total_gib)} per device ({', '.join(parts)})"
    if memory.device_memory_gib is not None:
        text += f" on a {memory.device_memory_gib:g} GB device"
    return text
