"""Whether a job fits the machine the local emulator runs it on.

On Vertex each replica has its own VM; the local emulator (VERTEX_EMULATOR_ADDR) starts every
process of every replica on this one machine, a CPU stand-in for each GPU or TPU chip. A job
whose memory plan needs more than the machine has would swap, or be killed by the kernel
midway with nothing said; it is refused at validation instead, naming both figures and the
way to run it here: the preset's scaled-down variant (vertexplan.presets).

What the job needs is the memory plan's per-device figure (less the accelerator runtime's
reserve, which a CPU process does not keep) for every device of the job, gathered per process
as the emulator starts them (one per GPU, one per TPU VM holding its chips' shares).
"""

from __future__ import annotations

import os

from django.conf import settings

from vertexplan.composer.compose import Composition
from vertexplan.memory import GIB

SCALE_DOWN_HINT = ("run it scaled down: a preset's local variant (`vcp presets run SLUG "
                   "--scale-down`, or \"Run scaled down locally\" on the compose page) keeps its "
                   "strategy, degrees and architecture at a CPU size; or submit it to Vertex")


def targets_local_emulator() -> bool:
    return bool(settings.VERTEX_EMULATOR_ADDR)


def machine_memory_gib() -> float:
    """This machine's physical memory, as the kernel counts it."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB


def overflow(composition: Composition, machine_gib: float | None = None) -> str | None:
    """Why the job cannot run on this machine, or None (it fits, or has no memory plan)."""
    plan = composition.memory_plan
    if plan is None:
        return None
    machine_gib = machine_memory_gib() if machine_gib is None else machine_gib
    per_device = plan.total_gib - plan.reserve_gib
    processes = max(composition.processes, 1)
    per_process = per_device * max(composition.world_size, 1) / processes
    needed = per_process * processes
    if needed <= machine_gib:
        return None
    return (f"the local emulator runs every process on this machine: this job needs "
            f"{needed:,.1f} GiB ({processes} process{'es' if processes > 1 else ''} x "
            f"{per_process:,.1f} GiB, its memory plan) but the machine has "
            f"{machine_gib:,.1f} GiB; {SCALE_DOWN_HINT}")


def local_errors(composition: Composition | None) -> dict[str, list[str]]:
    """The refusal keyed as the memory plan's own ("model.parameters"), when the job goes to
    the local emulator and does not fit this machine."""
    if composition is None or not targets_local_emulator():
        return {}
    message = overflow(composition)
    return {"model.parameters": [message]} if message else {}
