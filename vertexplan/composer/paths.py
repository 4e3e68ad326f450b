"""Field paths both ways: a CustomJob field <-> the job-request field a user can change.

Both use the catalogue's path syntax (``a.b[0]["key"]``). Errors the catalogue finds in the
composed CustomJob are re-keyed to the request field that produced them, so the form shows them
on its input; errors found in the request are keyed by their CustomJob field when the job came
in as Vertex REST JSON, so a script sees the path of what it sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vertexplan.catalog.errors import FieldError, child, item, resolve_path, split_path
from vertexplan.composer.parallelism import DEEPSPEED_ENV, FSDP_ENV, PARALLELISM_ENV, PJRT_ENV
from vertexplan.composer.request import (
    DISK_FIELDS,
    POOL_INDEX,
    POOL_ROLES,
    JobRequest,
    PoolRequest,
    inherited_fields,
)
from vertexplan.digits import ascii_int

_POOL_PATHS = {
    "machineSpec.machineType": "machine_type",
    "machineSpec.acceleratorType": "accelerator_type",
    "machineSpec.acceleratorCount": "accelerator_count",
    "machineSpec.tpuTopology": "tpu_topology",
    "machineSpec.gpuPartitionSize": "gpu_partition_size",
    "machineSpec.reservationAffinity": "reservation",
    "machineSpec": "machine_type",
    "diskSpec.bootDiskType": "boot_disk_type",
    "diskSpec.bootDiskSizeGb": "boot_disk_size_gb",
    "diskSpec": "boot_disk_size_gb",
    "replicaCount": "replica_count",
    "containerSpec.imageUri": "image_uri",
    "containerSpec.command": "command",
    "containerSpec.args": "args",
    "containerSpec.env": "env",
    "containerSpec": "image_uri",
    "pythonPackageSpec.executorImageUri": "python_package.executor_image_uri",
    "pythonPackageSpec.packageUris": "python_package.package_uris",
    "pythonPackageSpec.pythonModule": "python_package.python_module",
    "pythonPackageSpec.args": "args",
    "pythonPackageSpec.env": "env",
    "pythonPackageSpec": "python_package",
    "nfsMounts": "nfs_mounts",
}
_CONTAINER = ("image_uri", "command", "args", "env", "nfs_mounts")
_JOB_PATHS = {
    "displayName": "name",
    "labels": "labels",
    "encryptionSpec": "encryption_spec",
    "jobSpec.scheduling.strategy": "scheduling_strategy",
    "jobSpec.scheduling.timeout": "timeout_hours",
    "jobSpec.scheduling.maxWaitDuration": "max_wait_hours",
    "jobSpec.scheduling.restartJobOnWorkerRestart": "restart_job_on_worker_restart",
    "jobSpec.scheduling.disableRetries": "disable_retries",
    "jobSpec.scheduling": "scheduling_strategy",
    "jobSpec.network": "network",
    "jobSpec.reservedIpRanges": "reserved_ip_ranges",
    "jobSpec.pscInterfaceConfig": "psc_network_attachment",
    "jobSpec.baseOutputDirectory": "base_output_directory",
    "jobSpec.serviceAccount": "service_account",
    "jobSpec.enableWebAccess": "enable_web_access",
    "jobSpec.enableDashboardAccess": "enable_dashboard_access",
    "jobSpec.tensorboard": "tensorboard",
    "jobSpec.experiment": "experiment",
    "jobSpec.experimentRun": "experiment_run",
}
# Generated environment variables belong to the request section they were written from.
_ENV_SECTIONS = {DEEPSPEED_ENV: "deepspeed", FSDP_ENV: "fsdp", PARALLELISM_ENV: "parallelism",
                 PJRT_ENV: "strategy"}


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def pool_roles(request: JobRequest) -> dict[int, str]:
    """workerPoolSpecs index -> the request role that fills it."""
    roles = {0: "chief", 1: "workers", 3: "evaluators"}
    roles[2] = ("parameter_servers" if "parameter_servers" in request.given_pools
                else "reduction_server")
    return roles


def request_field_for(path: str, request: JobRequest,
                      custom_job: dict[str, Any] | None = None) -> str:
    """The request field behind a CustomJob field path ('' for the job as a whole)."""
    for prefix, name in _JOB_PATHS.items():
        if _under(path, prefix):
            if name == "labels" and path != "labels":
                return "labels" + path[len("labels"):]
            return name
    if path.startswith("jobSpec.") and not path.startswith("jobSpec.workerPoolSpecs"):
        return "job_spec_extra"
    prefix = "jobSpec.workerPoolSpecs["
    if not path.startswith(prefix):
        return ""
    index_text, _, rest = path[len(prefix):].partition("]")
    rest = rest.lstrip(".")
    index = ascii_int(index_text)
    role = pool_roles(request).get(index) if index is not None else None
    if role is None:
        return ""
    for spec_path, name in _POOL_PATHS.items():
        if not _under(rest, spec_path):
            continue
        if name == "env" and custom_job is not None:
            section = _generated_env_section(custom_job, path)
            if section:
                return section
        return _pool_field(role, name, request, rest[len(spec_path):])
    return role


def _pool_field(role: str, name: str, request: JobRequest, tail: str) -> str:
    p = request.given_pools.get(role) or PoolRequest(role)
    if name.startswith("python_package"):
        return name  # one package for every pool: a job-level field
    if name in _CONTAINER and role != "reduction_server":
        if name in p.keys:
            return f"{role}.{name}{tail if name == 'nfs_mounts' else ''}"
        return f"{name}{tail if name == 'nfs_mounts' else ''}"
    if role == "workers" and name in inherited_fields(p) and getattr(p, name) in (None, ""):
        # The workers pool inherited this from the chief: the chief's field is at fault.
        return f"chief.{name}"
    return f"{role}.{name}"


def _generated_env_section(custom_job: dict[str, Any], path: str) -> str | None:
    """'deepspeed' for an error on the CP_DEEPSPEED_CONFIG_JSON entry, and so on."""
    head, sep, _ = path.partition("].value")
    if not sep:
        head, sep, _ = path.partition("].name")
    if not sep:
        return None
    found, entry = resolve_path(custom_job, head + "]")
    if not (found and isinstance(entry, dict)):
        return None
    name = entry.get("name")
    env_path, _, index = head.rpartition("[")
    _, env = resolve_path(custom_job, env_path)
    first = next((i for i, e in enumerate(env or []) if isinstance(e, dict)
                  and e.get("name") == name), None)
    # Generated variables come first: a later entry of the same name is the user's.
    if first is None or str(first) != index:
        return None
    return _ENV_SECTIONS.get(name)


# -- the other way: request field -> CustomJob field ------------------------------------------

def custom_job_path_for(key: str, custom_job: dict[str, Any]) -> str:
    """The CustomJob field a request field became ('' when it has no single one)."""
    if not key:
        return ""
    head = key.split(".", 1)[0].split("[", 1)[0]
    if head in POOL_ROLES:
        return _pool_path(key, head, custom_job)
    for path, name in _JOB_PATHS.items():
        if name == head:
            if head == "labels" and key != "labels":
                return "labels" + key[len("labels"):]
            found, _ = resolve_path(custom_job, path)
            return path if found else _parent_present(path, custom_job)
    section_env = {v: k for k, v in _ENV_SECTIONS.items() if v != "strategy"}
    env_name = section_env.get(head)
    if head in ("batch", "precision") and _find_env(custom_job, DEEPSPEED_ENV):
        env_name = DEEPSPEED_ENV
    if env_name:
        found = _find_env(custom_job, env_name)
        if found:
            return found
    base = "jobSpec.workerPoolSpecs[0].containerSpec"
    if head in ("image_uri", "command", "args", "env"):
        return f"{base}.{_container_key(head)}"
    if head == "nfs_mounts":
        return "jobSpec.workerPoolSpecs[0].nfsMounts" + key[len("nfs_mounts"):]
    if head == "job_spec_extra":
        return "jobSpec"
    # strategy, batch, precision, parallelism, model: shown in the command line the job runs.
    return f"{base}.args" if resolve_path(custom_job, f"{base}.args")[0] else base


def _container_key(name: str) -> str:
    return {"image_uri": "imageUri"}.get(name, name)


def _find_env(custom_job: dict[str, Any], name: str) -> str | None:
    found, env = resolve_path(custom_job, "jobSpec.workerPoolSpecs[0].containerSpec.env")
    if found and isinstance(env, list):
        for i, entry in enumerate(env):
            if isinstance(entry, dict) and entry.get("name") == name:
                return f"jobSpec.workerPoolSpecs[0].containerSpec.env[{i}].value"
    return None


def _pool_path(key: str, role: str, custom_job: dict[str, Any]) -> str:
    base = f"jobSpec.workerPoolSpecs[{POOL_INDEX[role]}]"
    field = key.split(".", 1)[1] if "." in key else ""
    name = field.split(".", 1)[0].split("[", 1)[0]
    spec_path = {v: k for k, v in reversed(_POOL_PATHS.items())}.get(name)
    if spec_path is None:
        return base
    if name in DISK_FIELDS or name == "replica_count" or name == "nfs_mounts":
        path = f"{base}.{spec_path}{field[len(name):] if name == 'nfs_mounts' else ''}"
    else:
        path = f"{base}.{spec_path}"
    found, _ = resolve_path(custom_job, path)
    return path if found else _parent_present(path, custom_job)


def _parent_present(path: str, document: dict[str, Any]) -> str:
    """The path itself if present, else its nearest present ancestor ('' at the top)."""
    parts = split_path(path)
    while parts:
        text = _join(parts)
        if resolve_path(document, text)[0]:
            return text
        parts = parts[:-1]
    return ""


def _join(parts: list[str | int]) -> str:
    out = ""
    for part in parts:
        out = item(out, part) if isinstance(part, int) else child(out, part)
    return out


# -- anchoring: every error on a field the request has ----------------------------------------

_FALLBACK = {"strategy": "chief.machine_type", "precision": "strategy",
             "image_uri": "name", "scheduling_strategy": "name"}


def anchor(key: str, request: JobRequest) -> str:
    """``key`` if the request has that field, else the field that made it necessary.

    An error about a field the request left out (an A100 machine without accelerator_type)
    belongs to the field that asked for it (machine_type), and failing that to the nearest
    enclosing field the request has; a form has every field, so this only changes API keys.
    """
    if not key or _present(request, key):
        return key
    try:
        parts = split_path(key)
    except ValueError:
        return key
    if len(parts) >= 2 and parts[0] in POOL_ROLES:
        sibling = f"{parts[0]}.machine_type"
        if _present(request, sibling):
            return sibling
    for end in range(len(parts) - 1, 0, -1):
        parent = _join(parts[:end])
        if _present(request, parent):
            return parent
    fallback = _FALLBACK.get(key)
    if fallback and _present(request, fallback):
        return fallback
    return key


def _present(request: JobRequest, key: str) -> bool:
    try:
        found, value = resolve_path(request.document, key)
    except ValueError:
        return False
    return found and value is not None


# -- placing: every finding of a composition on its request field -------------------------------

@dataclass(frozen=True)
class Finding:
    key: str  # a request field path ("" for the job as a whole)
    message: str
    suggestions: tuple[str, ...] = ()
    warning: bool = False


@dataclass
class Placed:
    # Keyed by request field path ("chief.accelerator_count"); "" for the job as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)


def with_suggestions(err: FieldError) -> str:
    """A catalogue error's message, naming its valid values when it does not already."""
    if not err.suggestions or any(s in err.message for s in err.suggestions):
        return err.message
    return f"{err.message} (valid: {', '.join(err.suggestions)})"


def place(findings: Iterable[Finding | FieldError], request: JobRequest,
          custom_job: dict[str, Any]) -> Placed:
    """Findings in order, each on the request field it belongs to (``anchor``): the
    catalogue's errors on the composed CustomJob (``FieldError``, keyed by its paths) on the
    request field behind their path. A message is kept once per field."""
    placed = Placed()
    for finding in findings:
        if isinstance(finding, FieldError):
            finding = Finding(request_field_for(finding.path, request, custom_job),
                              with_suggestions(finding), tuple(finding.suggestions))
        key = anchor(finding.key, request)
        target = placed.warnings if finding.warning else placed.errors
        if finding.message not in target.get(key, []):
            target.setdefault(key, []).append(finding.message)
        if finding.suggestions and key not in placed.suggestions:
            placed.suggestions[key] = tuple(finding.suggestions)
    return placed
