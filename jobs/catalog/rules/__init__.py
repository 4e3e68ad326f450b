"""The validation rules, in the order they run.

Each rule is a small function of the parsed job (``view.JobView``) yielding FieldErrors. Earlier
rules check that a field can be read; later rules combine fields and skip what an earlier rule
already found unreadable, so one mistake is reported once.
"""

from __future__ import annotations

from ._common import Rule
from .accelerators import check_accelerators
from .fields import check_field_names
from .job import (
    check_display_name,
    check_flags,
    check_job_object,
    check_labels,
    check_network,
    check_output_directory,
    check_reserved_ip_ranges,
    check_service_account,
)
from .pools import (
    check_disks,
    check_machine_types,
    check_replica_counts,
    check_reservation_affinity,
    check_worker_pools,
)
from .reduction_server import check_reduction_server
from .scheduling import (
    check_durations,
    check_flex_start,
    check_retries,
    check_scheduling_object,
    check_spot_on_tpu_pods,
    check_strategy,
)
from .storage import check_nfs_mounts, check_persistent_disks, check_psc_interface
from .tasks import check_tasks
from .tpu import check_tpu_alone, check_tpu_topology

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
