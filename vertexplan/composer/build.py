"""Request -> CustomJob (Vertex REST JSON), and the topology its strategy works with.

Values are written as given when they cannot be read (an accelerator count of "two"): the
catalogue's validation then reports them with Vertex's own field path, which the composer maps
back to the request field. Building never raises on a request's values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from vertexplan import catalog
from vertexplan.catalog.values import as_int
from vertexplan.composer import parallelism, tracking
from vertexplan.composer.request import (
    PASSTHROUGH_JOB_SPEC,
    POOL_INDEX,
    REDUCTION_SERVER_MACHINE,
    TRAINER_ROLES,
    blank,
    effective_workers,
    pool,
)


@dataclass
class Built:
    custom_job: dict[str, Any]
    topology: parallelism.Topology
    launch: parallelism.Launch
    # role -> the pool as composed (workers with the chief's fields filled in)
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)
    builtin: bool = True


def _count(value: Any) -> Any:
    number = as_int(value, bits=32)
    return number if number is not None else value


def machine_spec(p: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": p.get("machine_type") or ""}
    if p.get("accelerator_type"):
        spec["acceleratorType"] = p["accelerator_type"]
    if p.get("accelerator_count") not in (None, "", 0):
        spec["acceleratorCount"] = _count(p["accelerator_count"])
    if p.get("tpu_topology"):
        spec["tpuTopology"] = p["tpu_topology"]
    if p.get("gpu_partition_size"):
        spec["gpuPartitionSize"] = p["gpu_partition_size"]
    reservation = p.get("reservation")
    if isinstance(reservation, dict) and reservation:
        affinity: dict[str, Any] = {"reservationAffinityType": reservation.get("type")}
        if reservation.get("key"):
            affinity["key"] = reservation["key"]
        if reservation.get("values"):
            affinity["values"] = reservation["values"]
        spec["reservationAffinity"] = affinity
    elif reservation not in (None, {}):
        spec["reservationAffinity"] = reservation
    return spec


def _disk(p: dict[str, Any]) -> dict[str, Any]:
    size = p.get("boot_disk_size_gb")
    return {"bootDiskType": p.get("boot_disk_type") or "pd-ssd",
            "bootDiskSizeGb": 100 if size in (None, "") else _count(size)}


def _replicas(value: Any) -> Any:
    number = 1 if value in (None, "") else as_int(value)
    # int64 is a string in Vertex's REST JSON
    return str(number) if number is not None else value


def nfs_mounts(mounts: Any) -> Any:
    if not isinstance(mounts, list):
        return mounts
    out = []
    for m in mounts:
        if isinstance(m, dict):
            out.append({"server": m.get("server"), "path": m.get("path"),
                        "mountPoint": m.get("mount_point")})
        else:
            out.append(m)
    return out


def env_list(env: Any) -> Any:
    if isinstance(env, dict):
        return [{"name": k, "value": v if isinstance(v, str) else _text(v)}
                for k, v in env.items()]
    return env


def _text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


def devices(p: dict[str, Any]) -> tuple[int, bool]:
    """(processes one replica runs, whether they are TPU chips). 1 for CPU and unknown machines."""
    try:
        shape = catalog.describe_machine_spec(machine_spec(p))
    except ValueError:
        return 1, False
    return max(shape.devices, 1), shape.kind == "tpu"


def _replica_number(value: Any, default: int = 1) -> int:
    number = default if value in (None, "") else as_int(value)
    return number if isinstance(number, int) and number > 0 else 0


def topology(pools: dict[str, dict[str, Any]]) -> parallelism.Topology:
    world, replicas, per_replica, tpu = 0, 0, 0, False
    for role in TRAINER_ROLES:
        p = pools.get(role)
        if p is None:
            continue
        n = _replica_number(p.get("replica_count"))
        count, is_tpu = devices(p)
        world += n * count
        replicas += n
        per_replica = per_replica or count
        tpu = tpu or is_tpu
    return parallelism.Topology(world_size=max(world, 1), devices_per_replica=max(per_replica, 1),
                               replicas=max(replicas, 1), tpu=tpu)


def build(request: dict[str, Any], *, region: str,
          default_image: Callable[[Any], str]) -> Built:
    """``default_image``: the image a job that names none runs, by its strategy."""
    pools = _pools(request)
    topo = topology(pools)
    container, launch, builtin = _container(request, topo, default_image)
    mounts = request.get("nfs_mounts")
    specs: list[dict[str, Any]] = [{} for _ in range(1 + max(POOL_INDEX[r] for r in pools))]
    for role, p in pools.items():
        specs[POOL_INDEX[role]] = _pool_spec(role, p, container, mounts, region,
                                             python_package(request))
    spec: dict[str, Any] = {"workerPoolSpecs": specs, "scheduling": _scheduling(request, pools)}
    _job_spec_fields(request, spec)
    custom_job: dict[str, Any] = {"displayName": request.get("name") or "", "jobSpec": spec}
    if not blank(request.get("labels")):
        custom_job["labels"] = request["labels"]
    if not blank(request.get("encryption_spec")):
        custom_job["encryptionSpec"] = request["encryption_spec"]
    return Built(custom_job=custom_job, topology=topo, launch=launch, pools=pools,
                 builtin=builtin)


def _pools(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The request's pools by role, the workers with the chief's fields filled in."""
    chief = pool(request, "chief") or {}
    pools: dict[str, dict[str, Any]] = {"chief": chief}
    workers = pool(request, "workers")
    if workers is not None:
        pools["workers"] = effective_workers(chief, workers)
    for role in ("reduction_server", "parameter_servers", "evaluators"):
        p = pool(request, role)
        if p is not None:
            pools[role] = p
    return pools


def _container(request: dict[str, Any], topo: parallelism.Topology,
               default_image: Callable[[Any], str],
               ) -> tuple[dict[str, Any], parallelism.Launch, bool]:
    """The chief's containerSpec (the other pools' unless they override it), the strategy's
    launch, and whether the built-in trainer runs."""
    command = request.get("command") or []
    # image_entrypoint: run the image's own ENTRYPOINT (no command), e.g. an imported job. A
    # Python package runs its module in Google's prebuilt image: no command of its own either.
    entrypoint = bool(request.get("image_entrypoint")) or python_package(request) is not None
    builtin = not entrypoint and (blank(command) or command in parallelism.BUILTIN_COMMANDS)
    flags = not entrypoint and blank(command)
    launch = parallelism.launch(request, topo, flags=flags, trainer=builtin)
    strategy = request.get("strategy") or "ddp"
    own = parallelism.trainer_command(strategy)
    if builtin and not flags and command != own and strategy in parallelism.STRATEGIES:
        launch.error("command", f"{' '.join(command)} is the built-in trainer of another "
                     f"strategy; {strategy} runs {' '.join(own)}: leave command empty and the "
                     "composer writes it", (" ".join(own),))
    args = request.get("args")
    if flags:
        command = own
        user_args = parallelism.DEFAULT_TRAINER_ARGS if args is None else args
        args = [*launch.args, *(user_args if isinstance(user_args, list) else [])]
    elif args is None:
        args = []
    env = env_list(request.get("env") or {})
    if isinstance(env, list) and launch.env:
        env = [{"name": k, "value": v} for k, v in launch.env] + env
    container: dict[str, Any] = {"imageUri": request.get("image_uri") or default_image(strategy)}
    if not entrypoint:
        container["command"] = command
    container["args"] = [_text(a) for a in args] if isinstance(args, list) else args
    if env:
        container["env"] = env
    return container, launch, builtin


def _scheduling(request: dict[str, Any], pools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    restart = request.get("restart_job_on_worker_restart")
    if restart is None:
        # Collective training cannot continue with one replica gone: restart them together,
        # unless retries are off (Vertex then forbids restarting the job).
        trainers = sum(_replica_number(pools[r].get("replica_count")) for r in TRAINER_ROLES
                       if r in pools)
        restart = trainers > 1 and not request.get("disable_retries")
    scheduling: dict[str, Any] = {"strategy": request.get("scheduling_strategy") or "STANDARD",
                                  "restartJobOnWorkerRestart": restart}
    if request.get("disable_retries"):
        scheduling["disableRetries"] = request["disable_retries"]
    for key, name in (("timeout_hours", "timeout"), ("max_wait_hours", "maxWaitDuration")):
        value = request.get(key)
        if value not in (None, ""):
            scheduling[name] = _duration(value)
    return scheduling


def _job_spec_fields(request: dict[str, Any], spec: dict[str, Any]) -> None:
    """The CustomJobSpec's fields beside its pools and scheduling, added to ``spec``."""
    for key, name in (("service_account", "serviceAccount"), ("network", "network"),
                      ("reserved_ip_ranges", "reservedIpRanges")):
        if not blank(request.get(key)):
            spec[name] = request[key]
    if not blank(request.get("psc_network_attachment")):
        spec["pscInterfaceConfig"] = {"networkAttachment": request["psc_network_attachment"]}
    if not blank(request.get("base_output_directory")):
        spec["baseOutputDirectory"] = {"outputUriPrefix": request["base_output_directory"]}
    for key, name in (("enable_web_access", "enableWebAccess"),
                      ("enable_dashboard_access", "enableDashboardAccess")):
        if request.get(key):
            spec[name] = request[key]
    extra = request.get("job_spec_extra")
    if isinstance(extra, dict):
        spec.update({k: v for k, v in extra.items() if k in PASSTHROUGH_JOB_SPEC})
    # The request's own fields win over the same ones passed through.
    spec.update(tracking.spec_fields(request))


def _duration(hours: Any) -> Any:
    """Hours -> a proto Duration string, exact to the nanosecond a Duration holds ("172800s",
    "0.5s"): an imported sub-second timeout is not cut."""
    if isinstance(hours, bool) or not isinstance(hours, int | float) \
            or not math.isfinite(hours):
        return hours
    if abs(hours * 3600) > 10**12:
        # Beyond any Duration Vertex takes: left as it came, so validation names the field.
        return f"{hours}h"
    seconds = (Decimal(repr(hours)) * 3600).quantize(Decimal("1e-9")).normalize()
    return f"{seconds:f}s"


def python_package(request: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``python_package`` section (a pythonPackageSpec's executor image, package
    URIs and module), None when the job runs a container."""
    value = request.get("python_package")
    return value if isinstance(value, dict) and value else None


def package_spec(package: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
    """A pythonPackageSpec: the package's module in the executor image, with the container's
    arguments and environment (the strategy's variables included)."""
    spec: dict[str, Any] = {"executorImageUri": package.get("executor_image_uri") or "",
                            "packageUris": package.get("package_uris") or [],
                            "pythonModule": package.get("python_module") or ""}
    if "args" in container:
        spec["args"] = container["args"]
    if container.get("env"):
        spec["env"] = container["env"]
    return spec


def _pool_spec(role: str, p: dict[str, Any], container: dict[str, Any], mounts: Any,
               region: str, package: dict[str, Any] | None = None) -> dict[str, Any]:
    if role == "reduction_server":
        p = {"machine_type": REDUCTION_SERVER_MACHINE, **{k: v for k, v in p.items()
                                                          if not blank(v)}}
        image = p.get("image_uri") or _reduction_server_image(region)
        return {"machineSpec": machine_spec(p), "replicaCount": _replicas(p.get("replica_count")),
                "diskSpec": _disk(p), "containerSpec": {"imageUri": image}}
    own = dict(container)
    for key, name in (("image_uri", "imageUri"), ("command", "command"), ("args", "args")):
        if key in p and p[key] is not None:
            own[name] = p[key]
    if "env" in p and p["env"] is not None:
        own.pop("env", None)
        if p["env"]:
            own["env"] = env_list(p["env"])
    task = ({"pythonPackageSpec": package_spec(package, own)} if package is not None
            and not any(k in p for k in ("image_uri", "command")) else {"containerSpec": own})
    out: dict[str, Any] = {"machineSpec": machine_spec(p),
                           "replicaCount": _replicas(p.get("replica_count")),
                           "diskSpec": _disk(p), **task}
    pool_mounts = p.get("nfs_mounts") if "nfs_mounts" in p else mounts
    if not blank(pool_mounts):
        out["nfsMounts"] = nfs_mounts(pool_mounts)
    return out


def _reduction_server_image(region: str) -> str:
    try:
        return catalog.reduction_server_image(region)
    except catalog.UnknownRegionError:
        return catalog.reduction_server_image("us-central1")
