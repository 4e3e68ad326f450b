"""Request -> CustomJob (Vertex REST JSON), from the pools' machines as read (hardware.py), the
strategy's launch (parallelism.py) and the tracking fields (tracking.py).

Values are written as given when they cannot be read (an accelerator count of "two"): the
catalogue's validation then reports them with Vertex's own field path, which the composer maps
back to the request field. Building never raises on a request's values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from vertexplan.catalog.lookups import UnknownRegionError, reduction_server_image
from vertexplan.composer.hardware import Hardware
from vertexplan.composer.launch import Launch
from vertexplan.composer.parallelism import DEFAULT_TRAINER_ARGS, trainer_command
from vertexplan.composer.request import (
    PASSTHROUGH_JOB_SPEC,
    POOL_INDEX,
    JobRequest,
    PoolRequest,
    blank,
)
from vertexplan.composer.tracking import Tracking


@dataclass
class Built:
    custom_job: dict[str, Any]
    hardware: Hardware
    launch: Launch
    tracking: Tracking


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


def build(request: JobRequest, hardware: Hardware, launch: Launch, tracking: Tracking, *,
          default_image: Callable[[Any], str]) -> Built:
    """``default_image``: the image a job that names none runs, by its strategy."""
    scheduling = _scheduling(request, hardware.trainer_replicas)
    spec_fields = _job_spec_fields(request)
    container = _container(request, launch, default_image)
    specs: list[dict[str, Any]] = [{} for _ in range(
        1 + max((POOL_INDEX[r] for r in request.pools), default=0))]
    for role, p in request.pools.items():
        if role != "reduction_server":
            specs[POOL_INDEX[role]] = _pool_spec(role, p, hardware, container, request)
    if "reduction_server" in request.pools:
        specs[POOL_INDEX["reduction_server"]] = _reduction_server_spec(
            request.pools["reduction_server"], hardware, request.region)
    # The request's own tracking fields win over the same ones passed through.
    spec = {"workerPoolSpecs": specs, "scheduling": scheduling, **spec_fields,
            **tracking.spec_fields}
    custom_job: dict[str, Any] = {"displayName": request.name, "jobSpec": spec}
    if not blank(request.labels):
        custom_job["labels"] = request.labels
    if not blank(request.encryption_spec):
        custom_job["encryptionSpec"] = request.encryption_spec
    return Built(custom_job=custom_job, hardware=hardware, launch=launch, tracking=tracking)


def _container(request: JobRequest, launch: Launch, default_image: Callable[[Any], str],
               ) -> dict[str, Any]:
    """The chief's containerSpec (the other pools' unless they override it)."""
    command = request.command or []
    args = request.args
    if launch.writes_command:
        command = trainer_command(request.strategy)
        user_args = DEFAULT_TRAINER_ARGS if args is None else args
        args = [*launch.args, *(user_args if isinstance(user_args, list) else [])]
    elif args is None:
        args = []
    env = env_list(request.env or {})
    if isinstance(env, list) and launch.env:
        env = [{"name": k, "value": v} for k, v in launch.env] + env
    container: dict[str, Any] = {
        "imageUri": request.image_uri or default_image(request.strategy)}
    if not launch.entrypoint:
        container["command"] = command
    container["args"] = [_text(a) for a in args] if isinstance(args, list) else args
    if env:
        container["env"] = env
    return container


def _scheduling(request: JobRequest, trainer_replicas: int) -> dict[str, Any]:
    restart = request.restart_job_on_worker_restart
    if restart is None:
        # Collective training cannot continue with one replica gone: restart them together,
        # unless retries are off (Vertex then forbids restarting the job).
        restart = trainer_replicas > 1 and not request.disable_retries
    scheduling: dict[str, Any] = {"strategy": request.scheduling,
                                  "restartJobOnWorkerRestart": restart}
    if request.disable_retries:
        scheduling["disableRetries"] = request.disable_retries
    for value, name in ((request.timeout_hours, "timeout"),
                        (request.max_wait_hours, "maxWaitDuration")):
        if value not in (None, ""):
            scheduling[name] = _duration(value)
    return scheduling


def _job_spec_fields(request: JobRequest) -> dict[str, Any]:
    """The CustomJobSpec's fields beside its pools and scheduling."""
    spec: dict[str, Any] = {}
    for value, name in ((request.service_account, "serviceAccount"),
                        (request.network, "network"),
                        (request.reserved_ip_ranges, "reservedIpRanges")):
        if not blank(value):
            spec[name] = value
    if not blank(request.psc_network_attachment):
        spec["pscInterfaceConfig"] = {"networkAttachment": request.psc_network_attachment}
    if not blank(request.base_output_directory):
        spec["baseOutputDirectory"] = {"outputUriPrefix": request.base_output_directory}
    for value, name in ((request.enable_web_access, "enableWebAccess"),
                        (request.enable_dashboard_access, "enableDashboardAccess")):
        if value:
            spec[name] = value
    extra = request.job_spec_extra
    if isinstance(extra, dict):
        spec.update({k: v for k, v in extra.items() if k in PASSTHROUGH_JOB_SPEC})
    return spec


def _duration(hours: Any) -> Any:
    """Hours -> a proto Duration string, exact to the nanosecond a Duration holds ("172800s",
    "0.5s"): an imported sub-second timeout is not cut."""
    if (isinstance(hours, bool) or not isinstance(hours, int | float)
            or not math.isfinite(hours)):
        return hours
    if abs(hours * 3600) > 10**12:
        # Beyond any Duration Vertex takes: left as it came, so validation names the field.
        return f"{hours}h"
    seconds = (Decimal(repr(hours)) * 3600).quantize(Decimal("1e-9")).normalize()
    return f"{seconds:f}s"


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


def _pool_spec(role: str, p: PoolRequest, hardware: Hardware, container: dict[str, Any],
               request: JobRequest) -> dict[str, Any]:
    own = dict(container)
    for value, name in ((p.image_uri, "imageUri"), (p.command, "command"), (p.args, "args")):
        if value is not None:
            own[name] = value
    if p.env is not None:
        own.pop("env", None)
        if p.env:
            own["env"] = env_list(p.env)
    package = request.python_package
    task = ({"pythonPackageSpec": package_spec(package, own)} if package is not None
            and not p.keys & {"image_uri", "command"} else {"containerSpec": own})
    out: dict[str, Any] = {**_machine(role, hardware), **task}
    pool_mounts = p.nfs_mounts if "nfs_mounts" in p.keys else request.nfs_mounts
    if not blank(pool_mounts):
        out["nfsMounts"] = nfs_mounts(pool_mounts)
    return out


def _machine(role: str, hardware: Hardware) -> dict[str, Any]:
    return {"machineSpec": hardware.machine_specs[role],
            "replicaCount": hardware.replica_counts[role],
            "diskSpec": hardware.disk_specs[role]}


def _reduction_server_spec(p: PoolRequest, hardware: Hardware, region: str) -> dict[str, Any]:
    """Vertex's Reduction Server: Google's image for the region unless the pool names one."""
    machine = _machine("reduction_server", hardware)
    image = p.image_uri
    if not image:
        try:
            image = reduction_server_image(region)
        except UnknownRegionError:
            image = reduction_server_image("us-central1")
    return {**machine, "containerSpec": {"imageUri": image}}
