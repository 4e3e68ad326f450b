"""A CustomJob (or an exported document) back into the job request that composes to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vertexplan import catalog, composer
from vertexplan.catalog.enums import strategy_name
from vertexplan.catalog.normalize import normalize_custom_job
from vertexplan.catalog.values import as_int
from vertexplan.composer.request import PASSTHROUGH_JOB_SPEC, JobRequest
from vertexplan.interop.document import read_document
from vertexplan.interop.fields import (
    disk_fields,
    duration_hours,
    env_dict,
    machine_fields,
    mount_fields,
    package_fields,
    pool_task,
)
from vertexplan.interop.launch import read_launch
from vertexplan.interop.wandb_launch import KIND as WANDB_KIND
from vertexplan.interop.wandb_launch import import_warnings

OUTPUT_ONLY = ("name", "state", "createTime", "startTime", "endTime", "updateTime", "error",
               "webAccessUris", "satisfiesPzs", "satisfiesPzi")
# Fields the composer has no request field for and cannot carry: refused on import.
UNSUPPORTED_POOL = {
    "lustreMounts": "Lustre mounts are not supported by the composer yet: use nfsMounts or "
                    "Cloud Storage (baseOutputDirectory)",
}
UNSUPPORTED_MACHINE: dict[str, str] = {}
_SPEC_FIELDS = {
    "network": "network", "reservedIpRanges": "reserved_ip_ranges",
    "serviceAccount": "service_account", "enableWebAccess": "enable_web_access",
    "enableDashboardAccess": "enable_dashboard_access",
}
_MACHINE_KEYS = ("machine_type", "accelerator_type", "accelerator_count", "tpu_topology",
                 "gpu_partition_size", "reservation")


@dataclass
class Imported:
    request: dict[str, Any]
    # Keyed by the imported document's field paths (jobSpec.workerPoolSpecs[0]...).
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    kind: str = "CustomJob"  # or CustomJobSpec
    custom_job: dict[str, Any] = field(default_factory=dict)  # the document as a CustomJob


def import_text(text: str, *, region: str, name: str = "", filename: str = "") -> Imported:
    """The job request of a document; ``name`` (or ``filename``'s stem) names a gcloud
    --config file that has no --display-name line."""
    document = read_document(text, name=name, filename=filename)
    region = document.header.get("region") or region
    result = to_request(document.job, region=region)
    result.kind = document.kind
    if document.kind == WANDB_KIND:
        result.warnings = [*import_warnings(document.job), *result.warnings]
    # What a Python file asks for that the importer cannot read: refused on its argument.
    for where, messages in document.errors.items():
        result.errors.setdefault(where, []).extend(messages)
    result.warnings = [*document.warnings, *result.warnings]
    return result


def _refusals(job: dict[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    pools = (job.get("jobSpec") or {}).get("workerPoolSpecs")
    for i, p in enumerate(pools if isinstance(pools, list) else []):
        if not isinstance(p, dict):
            continue
        for key, why in UNSUPPORTED_POOL.items():
            if key in p:
                errors[f"jobSpec.workerPoolSpecs[{i}].{key}"] = [f"{key}: {why}"]
        machine = p.get("machineSpec") if isinstance(p.get("machineSpec"), dict) else {}
        for key, why in UNSUPPORTED_MACHINE.items():
            if key in machine:
                errors[f"jobSpec.workerPoolSpecs[{i}].machineSpec.{key}"] = [f"{key}: {why}"]
    psc = (job.get("jobSpec") or {}).get("pscInterfaceConfig")
    if isinstance(psc, dict):
        for key in psc:
            if key != "networkAttachment":
                errors[f"jobSpec.pscInterfaceConfig.{key}"] = [
                    f"pscInterfaceConfig.{key} is not supported by the composer: only "
                    "networkAttachment"]
    return errors


def to_request(custom_job: dict[str, Any], *, region: str) -> Imported:
    """The job request that composes to ``custom_job``; refusals keyed by the job's paths."""
    normalized, notes = normalize_custom_job(custom_job)
    job = {k: v for k, v in normalized.items() if k not in OUTPUT_ONLY}
    result = Imported(request={}, custom_job=job, errors=_refusals(job), warnings=notes)
    spec = job.get("jobSpec") if isinstance(job.get("jobSpec"), dict) else {}
    request = _job_fields(job, spec, region)
    raw_pools = spec.get("workerPoolSpecs")
    if raw_pools is not None and not isinstance(raw_pools, list):
        # Refused on its path (every caller reports the errors: an import, a CustomJob body).
        result.errors.setdefault("jobSpec.workerPoolSpecs", []).append(
            f"workerPoolSpecs (worker_pool_specs) is a {type(raw_pools).__name__}: give a list "
            "of worker pool specs, one object per pool (the chief's first)")
        raw_pools = []
    pools = [p if isinstance(p, dict) else {} for p in (raw_pools or [])]
    if not pools or not pools[0]:
        result.request = request
        return result
    chief_raw = pools[0]
    request["chief"] = {**machine_fields(chief_raw.get("machineSpec")),
                        **disk_fields(chief_raw.get("diskSpec"))}
    replicas = chief_raw.get("replicaCount")
    if replicas is not None and as_int(replicas) != 1:
        number = as_int(replicas)
        request["chief"]["replica_count"] = number if number is not None else replicas
    if chief_raw.get("nfsMounts"):
        request["nfs_mounts"] = mount_fields(chief_raw["nfsMounts"])
    # The pools' shapes first: the strategy's batch and degrees depend on the world size.
    roles = {}
    for index, raw in enumerate(pools[1:4], start=1):
        if raw:
            roles[index] = _role(index, raw, region)
            request[roles[index]] = _pool(roles[index], raw, request, region)
    package = package_fields(chief_raw)
    if package is not None:
        request["python_package"] = package
    for index, role in roles.items():
        for path, message in _own_package(index, role, pools[index], package):
            result.errors.setdefault(path, []).append(message)
    chief_container = pool_task(chief_raw)
    for key, message in read_launch(request, chief_container):
        path = composer.custom_job_path_for(key, job)
        result.errors.setdefault(path, []).append(message)
    if package is not None:
        # The executor image stood in for the container's: the package section says it.
        request.pop("image_uri", None)
        request.pop("image_entrypoint", None)
    composed = composer.compose(JobRequest.from_dict(request))
    final_chief = pool_task(composed.custom_job["jobSpec"]["workerPoolSpecs"][0])
    for index, role in roles.items():
        if role != "reduction_server":
            request[role].update(_overrides(pools[index], request, final_chief))
    result.request = request
    return result


_PACKAGE_KEYS = {"executor_image_uri": "executorImageUri", "package_uris": "packageUris",
                 "python_module": "pythonModule"}


def _own_package(index: int, role: str, raw: dict[str, Any],
                 chief: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Refusals for a pool whose Python package is not the chief's.

    The request holds one Python package, which every pool that sets no image of its own runs
    (a pool may differ in args and env). Reading another pool's package as the chief's would run
    the chief's module there, so such a pool is refused on its own path, never rewritten."""
    own = package_fields(raw)
    if own is None or role == "reduction_server":
        return []
    where = f"jobSpec.workerPoolSpecs[{index}].pythonPackageSpec"
    if chief is None:
        return [(where, f"the {role} pool (workerPoolSpecs[{index}]) runs a Python package but "
                 "the chief (workerPoolSpecs[0]) runs a container: the composer runs a job's "
                 "Python package in the chief and the pools that have no image of their own. "
                 "Give the chief the same pythonPackageSpec, or give this pool a containerSpec "
                 "(a prebuilt image with the package installed)")]
    out = []
    for key, name in _PACKAGE_KEYS.items():
        if own[key] != chief[key]:
            out.append((f"{where}.{name}", f"{name} {own[key]!r} of the {role} pool "
                        f"(workerPoolSpecs[{index}]) differs from the chief's {chief[key]!r}: "
                        "the composer runs one Python package (executor image, package URIs "
                        "and module) in every pool, which may differ only in args and env. "
                        "Run the same module in every pool (it can read its role from "
                        "CLUSTER_SPEC or from its args), or give this pool a containerSpec"))
    return out


def _job_fields(job: dict[str, Any], spec: dict[str, Any], region: str) -> dict[str, Any]:
    """The request's fields outside the worker pools."""
    request: dict[str, Any] = {"name": job.get("displayName", ""), "region": region}
    if job.get("labels"):
        request["labels"] = job["labels"]
    if job.get("encryptionSpec"):
        request["encryption_spec"] = job["encryptionSpec"]
    _scheduling(spec.get("scheduling"), request)
    for key, name in _SPEC_FIELDS.items():
        if key in spec and spec[key] not in (None, "", [], False):
            request[name] = spec[key]
    psc = spec.get("pscInterfaceConfig")
    if isinstance(psc, dict) and psc.get("networkAttachment"):
        request["psc_network_attachment"] = psc["networkAttachment"]
    out = spec.get("baseOutputDirectory")
    if isinstance(out, dict) and out.get("outputUriPrefix"):
        request["base_output_directory"] = out["outputUriPrefix"]
    extra = {k: spec[k] for k in PASSTHROUGH_JOB_SPEC if k in spec}
    if extra:
        request["job_spec_extra"] = extra
    return request


def _scheduling(scheduling: Any, request: dict[str, Any]) -> None:
    # Vertex's default is not to restart the job with a worker; the composer's default
    # (restart multi-replica jobs) must not apply to a job that says nothing.
    request["restart_job_on_worker_restart"] = False
    if not isinstance(scheduling, dict):
        return
    if scheduling.get("strategy") is not None:
        name = strategy_name(scheduling["strategy"])
        if name not in (None, "STRATEGY_UNSPECIFIED"):
            request["scheduling_strategy"] = name
        elif name is None:
            request["scheduling_strategy"] = scheduling["strategy"]
    if "restartJobOnWorkerRestart" in scheduling:
        request["restart_job_on_worker_restart"] = scheduling["restartJobOnWorkerRestart"]
    if scheduling.get("disableRetries"):
        request["disable_retries"] = scheduling["disableRetries"]
    if scheduling.get("timeout") is not None:
        request["timeout_hours"] = duration_hours(scheduling["timeout"])
    if scheduling.get("maxWaitDuration") is not None:
        request["max_wait_hours"] = duration_hours(scheduling["maxWaitDuration"])


def _role(index: int, raw: dict[str, Any], region: str) -> str:
    if index == 1:
        return "workers"
    if index == 3:
        return "evaluators"
    container = raw.get("containerSpec") if isinstance(raw.get("containerSpec"), dict) else {}
    image = container.get("imageUri")
    plain = set(container) <= {"imageUri"} and "nfsMounts" not in raw
    if isinstance(image, str) and catalog.is_reduction_server_image(image) and plain:
        return "reduction_server"
    return "parameter_servers"


def _pool(role: str, raw: dict[str, Any], request: dict[str, Any],
          region: str) -> dict[str, Any]:
    """The pool's machine, disk and replicas (and a Reduction Server's image)."""
    machine, disk = machine_fields(raw.get("machineSpec")), disk_fields(raw.get("diskSpec"))
    out: dict[str, Any] = {}
    replicas = raw.get("replicaCount")
    if replicas is not None:
        number = as_int(replicas)
        out["replica_count"] = number if number is not None else replicas
    if role == "reduction_server":
        out.update(machine)
        out.update(disk)
        image = (raw.get("containerSpec") or {}).get("imageUri")
        try:
            default = catalog.reduction_server_image(region)
        except catalog.UnknownRegionError:
            default = None
        if image != default:
            out["image_uri"] = image
        return out
    chief = request.get("chief") or {}
    chief_machine = {k: v for k, v in chief.items() if k in _MACHINE_KEYS}
    chief_disk = {k: v for k, v in chief.items() if k in ("boot_disk_type", "boot_disk_size_gb")}
    if not (role == "workers" and machine == chief_machine and machine):
        out.update(machine)  # otherwise the workers inherit the chief's machine
    if not (role == "workers" and disk == chief_disk):
        out.update(disk)
        if role == "workers":
            # A workers pool with its own machine still inherits a missing disk field.
            for key in ("boot_disk_type", "boot_disk_size_gb"):
                if key not in disk and key in chief_disk:
                    out[key] = {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}[key]
    return out


def _overrides(raw: dict[str, Any], request: dict[str, Any],
               chief_container: dict[str, Any]) -> dict[str, Any]:
    """What a pool runs differently from the chief: kept as the pool's own values."""
    out: dict[str, Any] = {}
    own = pool_task(raw)
    for key, name in (("imageUri", "image_uri"), ("command", "command"), ("args", "args")):
        if own[key] != chief_container[key]:
            out[name] = own[key]
    if own["env"] != chief_container["env"]:
        env = env_dict(own["env"])
        out["env"] = env if env is not None else own["env"]
    mounts = raw.get("nfsMounts")
    if mount_fields(mounts or []) != (request.get("nfs_mounts") or []):
        out["nfs_mounts"] = mount_fields(mounts or [])
    return out
