"""An accelerator or TPU generation the job's region does not offer for training.

Vertex refuses such a job only when it is scheduled (or leaves it queued); the catalogue knows
at compose time, and says which regions do offer it.
"""

from __future__ import annotations

from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.hardware_regions import CLOUD_TPU_GENERATIONS
from vertexplan.catalog.lookups import get_tpu_machine
from vertexplan.catalog.offerings import (
    known_region,
    offered,
    provenance,
    regions_offering,
    tpu_offering,
)
from vertexplan.catalog.suggest import or_list
from vertexplan.catalog.view import JobView


def check_region_offerings(view: JobView) -> Iterator[FieldError]:
    region = view.region
    if not region or not known_region(region):
        return
    for pool in view.active_pools:
        machine = pool.machine
        if machine is None:
            continue
        if machine.is_tpu:
            tpu = get_tpu_machine(machine.name)
            generation = tpu.generation if tpu is not None else CLOUD_TPU_GENERATIONS.get(
                pool.accelerator_type.value)
            if generation is None:
                continue
            wanted, path, label = (tpu_offering(generation),
                                   pool.machine_type.path, f"TPU {generation}")
        elif isinstance(pool.accelerator_type.value, str):
            wanted, path, label = (pool.accelerator_type.value, pool.accelerator_type.path,
                                   pool.accelerator_type.value)
        else:
            continue
        if offered(region, wanted) is False:
            elsewhere = regions_offering(wanted)
            where = (f"regions that offer it: {or_list(elsewhere)}" if elsewhere
                     else "no region in the catalogue offers it")
            yield FieldError(path, f"{label} is not offered for Vertex training in {region} "
                             f"({provenance(region)}); {where}")
