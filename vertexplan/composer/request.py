"""The job request: what the form, the API, an import, a preset or a stored job asks for, read
once into a ``JobRequest`` that every stage of the composer (and the control plane after it)
reads by name.

A request names the job, its strategy and the four worker pools by role:

    chief             workerPoolSpecs[0], one replica
    workers           workerPoolSpecs[1]; a field left out takes the chief's value
    reduction_server  workerPoolSpecs[2]: Vertex's Reduction Server (GPU jobs)
    parameter_servers workerPoolSpecs[2]: parameter servers running the job's container
    evaluators        workerPoolSpecs[3]

Each pool has machine_type, accelerator_type, accelerator_count, tpu_topology, boot_disk_type,
boot_disk_size_gb, replica_count and reservation; a pool other than the chief may also override
the job's image_uri, command, args, env and nfs_mounts.

Reading decides what every stage would otherwise decide again: the region (``DEFAULTS`` when
the request names none), the strategy (ddp), the scheduling strategy (STANDARD), the older
spelling ``spot`` turned into ``scheduling_strategy``, and each pool's fields with the workers'
inherited from the chief. Values are kept as given, a count of "two" included: the composer's
and the catalogue's rules judge them and name the request field, so reading never refuses a
request. ``to_dict`` gives the request back as a job stores it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from vertexplan.catalog.values import as_int
from vertexplan.composer.defaults import DEFAULTS

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

# A value as the request gives it. The type a field should have is the rules' to judge (and
# to name in their message), so reading keeps whatever came.
Given = Any


def blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def normalize(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The request with older spellings turned into the current ones, and their conflicts.

    ``spot: true`` becomes ``scheduling_strategy: "SPOT"`` (and ``spot: false`` is dropped);
    ``model.activation_checkpointing: true`` becomes ``"full"`` (``false``, like the default
    ``"none"``, is dropped). Nothing else is filled in: a stored request keeps what the user
    actually chose.
    """
    out = dict(request)
    errors: dict[str, list[str]] = {}
    model = out.get("model")
    if isinstance(model, dict) and "activation_checkpointing" in model:
        out["model"] = _checkpointing_normalized(model)
        if not out["model"]:
            del out["model"]  # it said only that nothing is recomputed
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


def _checkpointing_normalized(model: dict[str, Any]) -> dict[str, Any]:
    """The model section with activation checkpointing spelled as a mode, or left out when it
    is none; a value that is no mode stays, for the composer to name."""
    given = model["activation_checkpointing"]
    out = dict(model)
    if given is True:
        out["activation_checkpointing"] = "full"
    elif given is False or given is None or given == "none":
        del out["activation_checkpointing"]
    return out


@dataclass(frozen=True)
class PoolRequest:
    """One worker pool: its machine, disk and replicas, and what it runs differently from the
    job (a container field it does not give is None: the job's)."""

    role: str
    keys: frozenset[str] = frozenset()  # the fields the pool gives, as written
    machine_type: Given = None
    accelerator_type: Given = None
    accelerator_count: Given = None
    tpu_topology: Given = None
    gpu_partition_size: Given = None
    reservation: Given = None
    boot_disk_type: Given = None
    boot_disk_size_gb: Given = None
    replica_count: Given = None
    image_uri: Given = None
    command: Given = None
    args: Given = None
    env: Given = None
    nfs_mounts: Given = None
    # The counts read as Vertex's JSON parser reads them (a number or a decimal string); None
    # where they cannot be, and the value given is then written as it came, for Vertex's
    # rules to name.
    accelerators: int | None = None
    disk_gb: int | None = None
    replicas: int | None = None


# A count field and the number it is read as (accelerators and disks are int32, replicas int64).
_NUMBERS = {"accelerator_count": ("accelerators", 32), "boot_disk_size_gb": ("disk_gb", 32),
            "replica_count": ("replicas", 64)}


def _numbers(values: dict[str, Any]) -> dict[str, int | None]:
    """The numbers of the count fields among ``values``."""
    return {number: as_int(values[name], bits=bits)
            for name, (number, bits) in _NUMBERS.items() if name in values}


def _pool(role: str, given: dict[str, Any]) -> PoolRequest:
    values = {name: given.get(name) for name in POOL_KEYS}
    return PoolRequest(role=role, keys=frozenset(k for k in given if isinstance(k, str)),
                       **values, **_numbers(values))


def inherited_fields(workers: PoolRequest) -> tuple[str, ...]:
    """Which workers-pool fields default to the chief's.

    A workers pool with no machine of its own runs on the chief's machine and accelerators, as
    data-parallel training wants. One with its own machine type keeps only the chief's disk:
    another machine's accelerators rarely fit it, and leaving them blank must be able to mean
    "none".
    """
    if workers.machine_type:
        return DISK_FIELDS
    # The reservation goes with the machine: workers on the chief's H100s that lost it would
    # land on on-demand capacity, or never schedule.
    return (*MACHINE_FIELDS, "reservation", *DISK_FIELDS)


def _with_chief(chief: PoolRequest, workers: PoolRequest) -> PoolRequest:
    """The workers pool with the fields it inherits from the chief filled in."""
    taken = {name: getattr(chief, name) for name in inherited_fields(workers)
             if getattr(workers, name) in (None, "") and getattr(chief, name) not in (None, "")}
    return replace(workers, **taken, **_numbers(taken))


@dataclass(frozen=True)
class JobRequest:
    """A job request, read. Build one with ``from_dict``; ``to_dict`` gives its stored form."""

    # The request as written, older spellings replaced and the region written in: what a job
    # stores, what the key check walks and what field paths are looked up in.
    document: Mapping[str, Any]
    region: str
    name: Given = ""
    strategy: Given = "ddp"
    precision: Given = None
    scheduling: Given = "STANDARD"  # the scheduling strategy
    # Conflicts between the request's spellings (spot against scheduling_strategy), keyed by
    # request field like every error of the composition.
    problems: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # role -> pool, for each pool given as an object: ``given_pools`` as written, ``pools`` as
    # composed (the chief always, the workers with the chief's fields they inherit).
    pools: Mapping[str, PoolRequest] = field(default_factory=dict)
    given_pools: Mapping[str, PoolRequest] = field(default_factory=dict)
    # Roles given as something other than an object or null (refused by name).
    malformed_pools: tuple[str, ...] = ()
    # What the job runs.
    image_uri: Given = None
    image_entrypoint: Given = None
    command: Given = None
    args: Given = None
    env: Given = None
    python_package: dict[str, Any] | None = None  # a pythonPackageSpec instead of a container
    nfs_mounts: Given = None
    # Scheduling.
    restart_job_on_worker_restart: Given = None
    disable_retries: Given = None
    timeout_hours: Given = None
    max_wait_hours: Given = None
    # The CustomJobSpec beside its pools.
    labels: Given = None
    encryption_spec: Given = None
    service_account: Given = None
    network: Given = None
    reserved_ip_ranges: Given = None
    psc_network_attachment: Given = None
    base_output_directory: Given = None
    enable_web_access: Given = None
    enable_dashboard_access: Given = None
    tensorboard: Given = None
    experiment: Given = None
    experiment_run: Given = None
    job_spec_extra: Given = None
    # The strategy's sections, the model's size (the memory plan) and the recovery policy.
    batch: Given = None
    fsdp: Given = None
    deepspeed: Given = None
    parallelism: Given = None
    tpu: Given = None
    model: Given = None
    recovery: Given = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobRequest:
        """Read a request written as a dict (the API's JSON, the form's fields, an import, a
        preset, a stored job). The region left out is ``DEFAULTS``'s, written in."""
        request = copy.deepcopy(dict(data))
        if not request.get("region"):
            request["region"] = DEFAULTS.region()
        request, problems = normalize(request)
        given = {role: _pool(role, value) for role in POOL_ROLES
                 if isinstance(value := request.get(role), dict)}
        # The chief is always composed (a request without one is refused on its fields).
        chief = given.get("chief") or PoolRequest("chief")
        pools = {"chief": chief, **given}
        if "workers" in given:
            pools["workers"] = _with_chief(chief, given["workers"])
        package = request.get("python_package")
        plain = {f.name: request.get(f.name) for f in fields(cls) if f.name in _AS_GIVEN}
        return cls(
            document=request, region=request["region"], name=request.get("name") or "",
            strategy=request.get("strategy") or "ddp",
            precision=request.get("precision") or None,
            scheduling=request.get("scheduling_strategy") or "STANDARD",
            problems={k: tuple(v) for k, v in problems.items()},
            pools=pools, given_pools=given,
            malformed_pools=tuple(role for role in POOL_ROLES if request.get(role) is not None
                                  and not isinstance(request.get(role), dict)),
            python_package=package if isinstance(package, dict) and package else None,
            **plain)

    def to_dict(self) -> dict[str, Any]:
        """The request as a job stores it (and the API answers it): a copy."""
        return copy.deepcopy(dict(self.document))


# Fields read straight from the request's own key of the same name.
_AS_GIVEN = frozenset({
    "image_uri", "image_entrypoint", "command", "args", "env", "nfs_mounts",
    "restart_job_on_worker_restart", "disable_retries", "timeout_hours", "max_wait_hours",
    "labels", "encryption_spec", "service_account", "network", "reserved_ip_ranges",
    "psc_network_attachment", "base_output_directory", "enable_web_access",
    "enable_dashboard_access", "tensorboard", "experiment", "experiment_run", "job_spec_extra",
    "batch", "fsdp", "deepspeed", "parallelism", "tpu", "model", "recovery"})
