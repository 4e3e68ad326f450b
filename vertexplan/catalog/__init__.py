"""Vertex AI training catalogue (machines, accelerators, TPUs, regions) and CustomJob validation.

Pure Python: no Django, no Google client libraries. The data lives in ``data/*.csv`` (each row
with its source and retrieval date) and is read on first use.

    from vertexplan.catalog import validate_custom_job
    errors = validate_custom_job(job_json, region="us-central1")
"""

from vertexplan.catalog.choices import (
    accelerator_count_choices,
    accelerator_type_choices,
    boot_disk_type_choices,
    machine_type_choices,
    region_choices,
    strategy_choices,
    tpu_topology_choices,
)
from vertexplan.catalog.errors import MISSING_FIELD_PATHS, FieldError, resolve_path
from vertexplan.catalog.loader import CatalogError, get_catalog
from vertexplan.catalog.lookups import (
    MachineShape,
    UnknownRegionError,
    allowed_accelerator_counts,
    allowed_accelerators,
    describe_machine_spec,
    device_memory_gb,
    devices_per_replica,
    get_accelerator,
    get_machine_type,
    get_region,
    get_tpu_machine,
    is_tpu,
    is_tpu_pod,
    list_machine_types,
    list_regions,
    machines_for_accelerator,
    reduction_server_image,
    tpu_topologies,
    vms_per_replica,
)
from vertexplan.catalog.records import (
    Accelerator,
    BootDiskType,
    Catalog,
    MachineType,
    Region,
    TpuMachine,
    TpuTopology,
)
from vertexplan.catalog.rules.reduction_server import is_reduction_server_image
from vertexplan.catalog.validate import validate_custom_job

__all__ = [
    "MISSING_FIELD_PATHS",
    "Accelerator",
    "BootDiskType",
    "Catalog",
    "CatalogError",
    "FieldError",
    "MachineShape",
    "MachineType",
    "Region",
    "TpuMachine",
    "TpuTopology",
    "UnknownRegionError",
    "accelerator_count_choices",
    "accelerator_type_choices",
    "allowed_accelerator_counts",
    "allowed_accelerators",
    "boot_disk_type_choices",
    "describe_machine_spec",
    "device_memory_gb",
    "devices_per_replica",
    "get_accelerator",
    "get_catalog",
    "get_machine_type",
    "get_region",
    "get_tpu_machine",
    "is_reduction_server_image",
    "is_tpu",
    "is_tpu_pod",
    "list_machine_types",
    "list_regions",
    "machine_type_choices",
    "machines_for_accelerator",
    "reduction_server_image",
    "region_choices",
    "resolve_path",
    "strategy_choices",
    "tpu_topologies",
    "tpu_topology_choices",
    "validate_custom_job",
    "vms_per_replica",
]
