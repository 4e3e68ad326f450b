"""The machine type x accelerator type x count rule (VERTEX_FACTS.md section 3)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.loader import get_catalog
from vertexplan.catalog.lookups import (
    allowed_accelerators,
    get_tpu_machine,
    machines_for_accelerator,
)
from vertexplan.catalog.records import MachineType
from vertexplan.catalog.rules._common import json_type, short
from vertexplan.catalog.suggest import did_you_mean, mean_clause, or_list
from vertexplan.catalog.view import JobView, PoolView

_SUGGEST_MAX = 3


def describe_offer(machine: MachineType) -> str:
    """What a machine takes, in words.

    '4 NVIDIA_TESLA_A100' for a machine that comes with its GPUs, 'NVIDIA_TESLA_P4 (1, 2 or 4),
    ... or NVIDIA_TESLA_V100 (1, 2, 4 or 8)' for one that takes a choice.
    """
    combos = allowed_accelerators(machine.name)
    if machine.accelerators == "required" and len(combos) == 1:
        ((acc, counts),) = combos.items()
        return f"{or_list(counts)} {acc}"
    return or_list(f"{acc} ({or_list(counts)})" for acc, counts in combos.items())


def nearest_machines(
    machine: MachineType, names: list[str], limit: int = _SUGGEST_MAX
) -> list[str]:
    """``names`` ordered by closeness to ``machine``: its series, its family, then the nearest
    vCPU count (a smaller machine before a larger one at the same distance)."""
    machines = get_catalog().machines
    size = machine.vcpus or 0

    def rank(name: str) -> tuple[int, int, int]:
        other = machines[name]
        kinship = (
            0 if other.series == machine.series else 1 if other.family == machine.family else 2
        )
        return kinship, abs((other.vcpus or 0) - size), other.vcpus or 0

    return sorted((n for n in names if n != machine.name), key=rank)[:limit]


def sibling_for_count(machine: MachineType, accelerator: str, count: int) -> str | None:
    """The machine of the same family closest in size to ``machine`` that takes ``count`` x
    ``accelerator`` (a2-highgpu-4g with 2 GPUs -> a2-highgpu-2g; 16 GPUs -> a2-megagpu-16g)."""
    machines = get_catalog().machines
    candidates = [
        name
        for name in machines_for_accelerator(accelerator, count)
        if machines[name].family == machine.family
    ]
    found = nearest_machines(machine, candidates, limit=1)
    return found[0] if found else None


def _malformed(pool: PoolView) -> Iterator[FieldError]:
    acc, count = pool.accelerator_type, pool.accelerator_count
    if acc.bad:
        if isinstance(acc.raw, str):
            close = did_you_mean(acc.raw, get_catalog().accelerators)
            yield FieldError(
                acc.path,
                f"acceleratorType {short(acc.raw)} is not a Vertex AcceleratorType"
                f"{mean_clause(close)}",
                close,
            )
        else:
            yield FieldError(
                acc.path,
                f"acceleratorType must be an AcceleratorType name such as "
                f"NVIDIA_TESLA_T4, got {json_type(acc.raw)}",
            )
    if count.bad:
        yield FieldError(
            count.path, f"acceleratorCount must be a whole number, got {short(count.raw)}"
        )
    elif count.value is not None and count.value < 0:
        yield FieldError(count.path, f"acceleratorCount cannot be negative (got {count.value})")


def _no_accelerators(pool: PoolView, machine: MachineType) -> Iterator[FieldError]:
    acc = pool.accelerator_type.value
    if acc is not None:
        others = machines_for_accelerator(acc, pool.accelerators_requested or None)
        others = nearest_machines(machine, others or machines_for_accelerator(acc))
        yield FieldError(
            pool.accelerator_type.path,
            f"{machine.name} takes no accelerators"
            + (f"; for {acc} use {or_list(others)}" if others else ""),
            tuple(others),
        )
    elif pool.accelerators_requested:
        yield FieldError(
            pool.accelerator_count.path,
            f"{machine.name} takes no accelerators: remove acceleratorCount",
        )


def _tpu_slice(pool: PoolView, machine: MachineType) -> Iterator[FieldError]:
    tpu = get_tpu_machine(machine.name)
    if tpu is None:
        return
    acc, count = pool.accelerator_type.value, pool.accelerators_requested
    if acc is not None and acc != tpu.accelerator_type:
        if tpu.accelerator_type:
            message = (
                f"{machine.name} is a TPU {tpu.generation} machine: its acceleratorType is "
                f"{tpu.accelerator_type} or left out, not {acc}"
            )
            suggestions: tuple[str, ...] = (tpu.accelerator_type,)
        else:
            message = (
                f"{machine.name} is a TPU {tpu.generation} machine: leave acceleratorType out "
                f"(the machine type and tpuTopology choose the TPU), not {acc}"
            )
            suggestions = ()
        yield FieldError(pool.accelerator_type.path, message, suggestions)
        return
    if count and count != tpu.chips_per_vm:
        yield FieldError(
            pool.accelerator_count.path,
            f"{machine.name} has {tpu.chips_per_vm} TPU chips per VM: leave acceleratorCount "
            f"out or set it to {tpu.chips_per_vm}, not {count} (tpuTopology sets the slice size)",
            (str(tpu.chips_per_vm),),
        )


def _attachable(pool: PoolView, machine: MachineType) -> Iterator[FieldError]:
    combos = allowed_accelerators(machine.name)
    acc, count = pool.accelerator_type.value, pool.accelerators_requested
    if acc is None:
        yield from _no_accelerator_type(pool, machine, combos, count)
    elif acc not in combos:
        yield from _accelerator_not_offered(pool, machine, acc, count)
    elif not count:
        counts = combos[acc]
        yield FieldError(
            pool.accelerator_count.path,
            f"acceleratorCount is required with acceleratorType {acc}: {machine.name} takes "
            f"{or_list(counts)}",
            tuple(str(n) for n in counts),
        )
    elif count not in combos[acc]:
        yield _count_not_offered(pool, machine, acc, count, combos[acc])


def _no_accelerator_type(
    pool: PoolView, machine: MachineType, combos: Mapping[str, tuple[int, ...]], count: int
) -> Iterator[FieldError]:
    offer = describe_offer(machine)
    if count:
        yield FieldError(
            pool.accelerator_count.path,
            f"acceleratorCount {count} without acceleratorType: name the accelerator; "
            f"{machine.name} takes {offer}",
            tuple(combos),
        )
    elif machine.accelerators == "required":
        acc0, counts0 = next(iter(combos.items()))
        how = (
            f"set acceleratorType to {acc0} and acceleratorCount to {counts0[0]}"
            if len(combos) == 1 and len(counts0) == 1
            else "set acceleratorType and acceleratorCount"
        )
        yield FieldError(
            pool.accelerator_type.path,
            f"{machine.name} comes with {offer}: {how}",
            tuple(combos),
        )


def _accelerator_not_offered(
    pool: PoolView, machine: MachineType, acc: str, count: int
) -> Iterator[FieldError]:
    verb = "comes with" if machine.accelerators == "required" else "takes"
    others = machines_for_accelerator(acc, count or None)
    wanted = f"{count} {acc}" if others and count else acc
    others = nearest_machines(machine, others or machines_for_accelerator(acc))
    where = (
        f"; for {wanted} use {or_list(others)}"
        if others
        else f"; no Vertex training machine in the catalogue takes {acc}"
    )
    yield FieldError(
        pool.accelerator_type.path,
        f"{machine.name} {verb} {describe_offer(machine)}, not {acc}{where}",
        tuple(others),
    )


def _count_not_offered(
    pool: PoolView, machine: MachineType, acc: str, count: int, counts: tuple[int, ...]
) -> FieldError:
    sibling = sibling_for_count(machine, acc, count)
    message = f"{machine.name} takes {or_list(counts)} {acc}, not {count}"
    if sibling:
        return FieldError(
            pool.accelerator_count.path,
            f"{message}; did you mean {sibling}? (or acceleratorCount {or_list(counts)})",
            (sibling,),
        )
    anywhere = machines_for_accelerator(acc, count)
    elsewhere = (
        f"; {count} {acc} come with {or_list(anywhere[:_SUGGEST_MAX])}"
        if anywhere
        else f" (no machine takes {count} {acc})"
    )
    return FieldError(
        pool.accelerator_count.path,
        f"{message}: set acceleratorCount to {or_list(counts)}{elsewhere}",
        tuple(str(n) for n in counts),
    )


def check_accelerators(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        errors = list(_malformed(pool))
        yield from errors
        machine = pool.machine
        if errors or machine is None:
            continue
        if machine.accelerators == "none":
            yield from _no_accelerators(pool, machine)
        elif machine.accelerators == "implied":
            yield from _tpu_slice(pool, machine)
        else:
            yield from _attachable(pool, machine)
