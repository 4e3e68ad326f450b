"""The validation rules, in the order they run.

Each rule is a small function of the parsed job (``view.JobView``) yielding FieldErrors. Earlier
rules check that a field can be read; later rules combine fields and skip what an earlier rule
already found unreadable, so one mistake is reported once.
"""

from __future__ import annotations

from vertexplan.catalog.rules._common import Rule
from vertexplan.catalog.rules.accelerators import check_accelerators
from vertexplan.catalog.rules.containers import check_tasks
from vertexplan.catalog.rules.fields import check_field_names
from vertexplan.catalog.rules.job import (
    check_display_name,
    check_flags,
    check_job_object,
    check_labels,
    check_network,
    check_output_directory,
    check_reserved_ip_ranges,
    check_service_account,
)
from vertexplan.catalog.rules.partitions import check_gpu_partitions
from vertexplan.catalog.rules.pools import (
    check_disks,
    check_machine_types,
    check_replica_counts,
    check_reservation_affinity,
    check_worker_pools,
)
from vertexplan.catalog.rules.reduction_server import check_reduction_server
from vertexplan.catalog.rules.regions import check_region_offerings
from vertexplan.catalog.rules.scheduling import (
    check_durations,
    check_flex_start,
    check_retries,
    check_scheduling_object,
    check_spot_on_tpu_pods,
    check_strategy,
)
from vertexplan.catalog.rules.storage import (
    check_nfs_mounts,
    check_persistent_disks,
    check_psc_interface,
)
from vertexplan.catalog.rules.tpu import check_tpu_alone, check_tpu_topology

RULES: tuple[Rule, ...] = (
    check_job_object,
    check_field_names,
    check_display_name,
    check_labels,
    check_worker_pools,
    check_replica_counts,
    check_machine_types,
    check_accelerators,
    check_tpu_topology,
    check_tpu_alone,
    check_region_offerings,
    check_gpu_partitions,
    check_reservation_affinity,
    check_disks,
    check_persistent_disks,
    check_nfs_mounts,
    check_tasks,
    check_reduction_server,
    check_scheduling_object,
    check_strategy,
    check_durations,
    check_retries,
    check_spot_on_tpu_pods,
    check_flex_start,
    check_network,
    check_service_account,
    check_output_directory,
    check_reserved_ip_ranges,
    check_psc_interface,
    check_flags,
)

__all__ = ["RULES", "Rule"]
