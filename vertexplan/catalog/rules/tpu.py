"""TPU rules: topologies per machine type, and a TPU job being one pool of one replica."""

from __future__ import annotations

from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.loader import get_catalog
from vertexplan.catalog.lookups import default_tpu_topology, get_tpu_machine
from vertexplan.catalog.rules._common import short, wrong_type
from vertexplan.catalog.suggest import did_you_mean, mean_clause, or_list
from vertexplan.catalog.view import JobView


def check_tpu_topology(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        machine, f = pool.machine, pool.tpu_topology
        if machine is None:
            continue
        if f.bad:
            yield wrong_type(f, "a topology string", '"2x2"')
            continue
        tpu = get_tpu_machine(machine.name)
        if tpu is None:
            if f.present and f.raw != "":
                yield FieldError(
                    f.path,
                    f"tpuTopology applies only to TPU slice machines (ct5lp-*, ct6e-*); "
                    f"{machine.name} takes none: remove it",
                )
            continue
        names = [t.topology for t in tpu.topologies]
        if not f.present or f.raw == "":
            if default_tpu_topology(machine.name) is None:
                yield FieldError(
                    f.path,
                    f"{machine.name} needs a tpuTopology: {or_list(names)} (chips per "
                    f"slice; {tpu.chips_per_vm} chips per VM)",
                    tuple(names),
                )
            continue
        if f.value in names:
            continue
        close = did_you_mean(f.value, names)
        elsewhere = [
            m.machine_type
            for m in get_catalog().tpu_machines.values()
            if m.generation == tpu.generation and f.value in [t.topology for t in m.topologies]
        ]
        where = f"; {f.value} is offered on {or_list(elsewhere)}" if elsewhere else ""
        yield FieldError(
            f.path,
            f"{machine.name} takes tpuTopology {or_list(names)}, not {short(f.value)}"
            f"{where}{mean_clause(close)}",
            close or tuple(names),
        )


def check_tpu_alone(view: JobView) -> Iterator[FieldError]:
    """Vertex runs a TPU job as one worker pool with one replica (the slice)."""
    if not view.pools:
        return
    chief = view.pools[0]
    chief_machine = chief.machine if chief.is_object else None
    if chief_machine is not None and chief_machine.is_tpu:
        for pool in view.pools[1:]:
            yield FieldError(
                pool.path,
                f"a TPU job ({chief_machine.name} in workerPoolSpecs[0]) takes "
                f"exactly one worker pool: remove workerPoolSpecs[{pool.index}]",
            )
        return
    for pool in view.active_pools:
        machine = pool.machine
        if pool.index > 0 and machine is not None and machine.is_tpu:
            yield FieldError(
                pool.machine_type.path,
                f"TPU machine {machine.name} can only run alone in "
                "workerPoolSpecs[0]: a TPU job has one worker pool of one replica",
            )
