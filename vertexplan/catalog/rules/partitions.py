"""MachineSpec.gpuPartitionSize: a Multi-Instance GPU (MIG) partition of the pool's GPU.

The sizes are the MIG profiles Google Kubernetes Engine lists for each GPU (GKE docs "Running
multi-instance GPUs", read 2026-11-24), which Vertex's field names the same way
("1g.10gb"); NVIDIA's MIG user guide has the same profiles. GPUs without MIG (T4, L4, V100)
take no partition.
"""

from __future__ import annotations

from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.suggest import did_you_mean, or_list
from vertexplan.catalog.view import JobView, read

MIG_PARTITIONS: dict[str, tuple[str, ...]] = {
    "NVIDIA_TESLA_A100": ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
    "NVIDIA_A100_80GB": ("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "NVIDIA_H100_80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "NVIDIA_H100_MEGA_80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "NVIDIA_H200_141GB": ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
}


def check_gpu_partitions(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        size = read(pool.machine_spec.value, pool.machine_spec.path, "gpuPartitionSize")
        if not size.present:
            continue
        if not isinstance(size.raw, str):
            yield FieldError(size.path, f"{size.path} must be a string such as 1g.10gb")
            continue
        gpu = pool.accelerator_type.value
        sizes = MIG_PARTITIONS.get(gpu) if isinstance(gpu, str) else None
        if sizes is None:
            gpus = or_list(MIG_PARTITIONS)
            yield FieldError(size.path, f"gpuPartitionSize {size.raw!r} needs a GPU with "
                             f"Multi-Instance GPU support ({gpus}); this pool has "
                             f"{gpu or 'no GPU'}")
        elif size.raw not in sizes:
            yield FieldError(size.path, f"gpuPartitionSize {size.raw!r} is not a MIG "
                             f"partition of {gpu}: use {or_list(sizes)}",
                             did_you_mean(size.raw, sizes))
