"""What Vertex training offers for storage, in words the rules and the composer share."""

from __future__ import annotations

# People coming from Compute Engine or from the material in PRESETS.md ask for a persistent disk
# per node. A CustomJob's DiskSpec has only the boot disk; this is what to use instead.
PERSISTENT_DISK_ANSWER = (
    "Vertex training has no persistent data disk per node: a worker pool's DiskSpec is only its "
    "boot disk (bootDiskType pd-ssd, pd-standard or hyperdisk-balanced, 100 to 64000 GB), "
    "which is deleted with the job. For data that must outlive a replica use the job's "
    "base_output_directory on Cloud Storage (AIP_CHECKPOINT_DIR, also mounted at /gcs/<bucket> "
    "through Cloud Storage FUSE), or an NFS share (nfs_mounts, mounted under /mnt/nfs/) from "
    "a peered VPC; for scratch space, a larger boot disk"
)
PERSISTENT_DISK_KEYS = frozenset({
    "persistentDisk", "persistentDisks", "persistentDiskSizeGb", "dataDisk", "dataDisks",
    "dataDiskSizeGb", "disks", "attachedDisk", "attachedDisks", "additionalDisks", "localSsd",
    "localSsds",
})
