"""The job request: the dict the form, the API and imports fill in, and its older spellings.

A request names the job, its strategy and the four worker pools by role:

    chief             workerPoolSpecs[0], one replica
    workers           workerPoolSpecs[1]; a field left out takes the chief's value
    reduction_server  workerPoolSpecs[2]: Vertex's Reduction Server (GPU jobs)
    parameter_servers workerPoolSpecs[2]: parameter servers running the job's container
    evaluators        workerPoolSpecs[3]

Each pool has machine_type, accelerator_type, accelerator_count, tpu_topology, boot_disk_type,
boot_disk_size_gb, replica_count and reservation; a pool other than the chief may also override
the job's image_uri, command, args, env and nfs_mounts.
"""

from __future__ import annotations

from typing import Any

POOL_ROLES = ("chief", "workers", "reduction_server", "parameter_servers", "evaluators")
POOL_INDEX = {"chief": 0, "workers": 1, "reduction_server": 2, "parameter_servers": 2,
              "evaluators": 3}
TRAINER_ROLES = ("chief", "workers")  # their devices make up the world size
# The fields every pool has (the form's flat fields are named <role>_<field>).
POOL_FIELDS = ("machine_type", "accelerator_type", "accelerator_count", "boot_disk_type",
               "boot_disk_size_gb")
MACHINE_FIELDS = ("machine_type", "accelerator_type", "accelerator_count", "tpu_topology",
                  "gpu_partition_size")
DISK_FIELDS = ("boot_disk_type", "boot_disk_size_gb")
CONTAINER_FIELDS = ("image_uri", "command", "args", "env", "nfs_mounts")
POOL_KEYS = (*MACHINE_FIELDS, *DISK_FIELDS, "replica_count", "reservation", *CONTAINER_FIELDS)
REDUCTION_SERVER_MACHINE = "n1-highcpu-16"  # Google's recommendation (VERTEX_FACTS.md 4)
SCHEDULING_STRATEGIES = ("STANDARD", "SPOT", "FLEX_START")

# CustomJobSpec fields the composer carries through unchanged (it has no inputs for them).
PASSTHROUGH_JOB_SPEC = ("tensorboard", "experiment", "experimentRun", "persistentResourceId",
                        "protectedArtifactLocationId", "models")

# What people ask for by these names does not exist on Vertex; say what does.
PERSISTENT_DISK_WORDS = ("persistent_disk", "persistent_disk_size_gb", "persistent_disks",
                         "data_disk", "data_disk_size_gb", "disks", "attached_disk",
                         "attached_disks", "additional_disk", "local_ssd")


def normalize(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The request with older spellings turned into the current ones, and their conflicts.

    ``spot: true`` becomes ``scheduling_strategy: "SPOT"`` (and ``spot: false`` is dropped).
    Nothing else is filled in: defaults are the composer's business, so a stored request keeps
    what the user actually chose.
    """
    out = dict(request)
    errors: dict[str, list[str]] = {}
    if "spot" in out:
        spot = out.pop("spot")
        chosen = out.get("scheduling_strategy")
        if spot and chosen not in (None, "", "SPOT"):
            errors["spot"] = [f"spot is true but scheduling_strategy is {chosen}: spot is the "
                              "older spelling of scheduling_strategy SPOT; give one of them"]
            out["spot"] = spot
        elif spot:
            out["scheduling_strategy"] = "SPOT"
    return out, errors


def pool(request: dict[str, Any], role: str) -> dict[str, Any] | None:
    """The role's pool as given, or None when the request has none (null or absent)."""
    value = request.get(role)
    return dict(value) if isinstance(value, dict) else None


def inherited_fields(workers: dict[str, Any]) -> tuple[str, ...]:
    """Which workers-pool fields default to the chief's.

    A workers pool with no machine of its own runs on the chief's machine and accelerators, as
    data-parallel training wants. One with its own machine type keeps only the chief's disk:
    another machine's accelerators rarely fit it, and leaving them blank must be able to mean
    "none".
    """
    if workers.get("machine_type"):
        return DISK_FIELDS
    # The reservation goes with the machine: workers on the chief's H100s that lost it would
    # land on on-demand capacity, or never schedule.
    return (*MACHINE_FIELDS, "reservation", *DISK_FIELDS)


def effective_workers(chief: dict[str, Any], workers: dict[str, Any]) -> dict[str, Any]:
    """The workers pool with the fields it inherits from the chief filled in."""
    out = dict(workers)
    for name in inherited_fields(workers):
        if workers.get(name) in (None, "") and chief.get(name) not in (None, ""):
            out[name] = chief[name]
    return out


def blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}
