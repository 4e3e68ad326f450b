"""Form data -> a Vertex CustomJob (REST JSON), validated by Vertex's own rules.

A *job request* is what a user fills in (the compose form, or the same fields as JSON through the
API). The composer turns it into the CustomJob that will be submitted, runs the catalogue's
validation on that CustomJob, and maps every error back to the request field that caused it, so
the form can show it on the field and the API can key it by the field's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from jobs.catalog import FieldError, validate_custom_job

STRATEGIES = {
    "ddp": "PyTorch DistributedDataParallel (gloo on CPU, NCCL on GPU)",
}
DEFAULT_TRAINER_ARGS = ["--preset", "tiny", "--steps", "300", "--checkpoint-every", "50"]
POOL_FIELDS = ("machine_type", "accelerator_type", "accelerator_count", "boot_disk_type",
               "boot_disk_size_gb")
# The launcher of the trainers that ship with this project (trainers/train.py).
TRAINER_COMMAND = ["python", "-m", "trainers.train"]


@dataclass
class Composition:
    custom_job: dict[str, Any]
    # Keyed by request field path ("chief.accelerator_count"); "" for the job as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)
    world_size: int = 1

    @property
    def ok(self) -> bool:
        return not self.errors


def _machine_spec(pool: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": pool.get("machine_type", "")}
    if pool.get("accelerator_type"):
        spec["acceleratorType"] = pool["accelerator_type"]
    if pool.get("accelerator_count"):
        spec["acceleratorCount"] = int(pool["accelerator_count"])
    return spec


def _worker_pool(pool: dict[str, Any], replicas: int, container: dict[str, Any]) -> dict[str, Any]:
    return {
        "machineSpec": _machine_spec(pool),
        "replicaCount": str(replicas),  # int64 is a string in Vertex's REST JSON
        "diskSpec": {
            "bootDiskType": pool.get("boot_disk_type") or "pd-ssd",
            "bootDiskSizeGb": int(pool.get("boot_disk_size_gb") or 100),
        },
        "containerSpec": container,
    }


def _inherited_fields(workers: dict[str, Any]) -> tuple[str, ...]:
    """Which workers-pool fields default to the chief's.

    A workers pool with no machine of its own runs on the chief's machine and accelerators, as
    DDP wants. One with its own machine type keeps only the chief's disk: another machine's
    accelerators rarely fit it, and leaving them blank must be able to mean "none".
    """
    if workers.get("machine_type"):
        return ("boot_disk_type", "boot_disk_size_gb")
    return POOL_FIELDS


def _int(value: Any, default: int) -> int:
    return default if value in (None, "") else int(value)


def _devices_per_replica(pool: dict[str, Any]) -> int:
    return max(int(pool.get("accelerator_count") or 0), 1)


def compose(request: dict[str, Any]) -> Composition:
    """Build the CustomJob for a job request and validate it. Pure apart from settings."""
    chief = dict(request.get("chief") or {})
    # A workers pool exists when the request has one; asking for it with 0 replicas is an error
    # Vertex would refuse, not a silent "no pool".
    workers_in = request.get("workers")
    has_workers = isinstance(workers_in, dict)
    workers_in = dict(workers_in) if has_workers else {}
    worker_replicas = _int(workers_in.get("replica_count"), 1)
    chief_replicas = _int(chief.get("replica_count"), 1)
    workers = {k: (workers_in.get(k) if workers_in.get(k) not in (None, "") else chief.get(k))
               for k in POOL_FIELDS if k in _inherited_fields(workers_in)}
    workers.update({k: v for k, v in workers_in.items() if k in POOL_FIELDS})

    strategy = request.get("strategy") or "ddp"
    command = list(request.get("command") or [])
    args = list(request.get("args") if request.get("args") is not None else DEFAULT_TRAINER_ARGS)
    if not command:
        command = list(TRAINER_COMMAND)
        args = ["--strategy", strategy, *args]
    container: dict[str, Any] = {
        "imageUri": request.get("image_uri") or settings.CP_DEFAULT_IMAGE,
        "command": command,
        "args": [str(a) for a in args],
    }
    env = request.get("env") or {}
    if env:
        container["env"] = [{"name": k, "value": str(v)} for k, v in env.items()]

    pools = [_worker_pool(chief, chief_replicas, container)]
    if has_workers:
        pools.append(_worker_pool(workers, worker_replicas, container))
    world_size = chief_replicas * _devices_per_replica(chief) + (
        worker_replicas * _devices_per_replica(workers) if has_workers else 0)

    restart_all = request.get("restart_job_on_worker_restart")
    if restart_all is None:
        # Collective training cannot continue with one replica gone: restart them together.
        restart_all = chief_replicas + (worker_replicas if has_workers else 0) > 1
    scheduling: dict[str, Any] = {
        "strategy": "SPOT" if request.get("spot") else "STANDARD",
        "restartJobOnWorkerRestart": bool(restart_all),
    }
    if request.get("timeout_hours"):
        scheduling["timeout"] = f"{int(float(request['timeout_hours']) * 3600)}s"

    custom_job = {
        "displayName": request.get("name") or "",
        "jobSpec": {"workerPoolSpecs": pools, "scheduling": scheduling},
    }
    composition = Composition(custom_job=custom_job, world_size=world_size)
    if strategy not in STRATEGIES:
        composition.errors.setdefault("strategy", []).append(
            f"{strategy!r} is not a strategy this composer knows; valid: {', '.join(STRATEGIES)}")
    for err in validate_custom_job(custom_job, request.get("region")):
        key = request_field_for(err.path, workers_explicit=workers_in)
        composition.errors.setdefault(key, []).append(_with_suggestions(err))
    return composition


def _with_suggestions(err: FieldError) -> str:
    if not err.suggestions or any(s in err.message for s in err.suggestions):
        return err.message
    return f"{err.message} (valid: {', '.join(err.suggestions)})"


_MACHINE_PATHS = {
    "machineSpec.machineType": "machine_type",
    "machineSpec.acceleratorType": "accelerator_type",
    "machineSpec.acceleratorCount": "accelerator_count",
    "machineSpec": "machine_type",
    "diskSpec.bootDiskType": "boot_disk_type",
    "diskSpec.bootDiskSizeGb": "boot_disk_size_gb",
    "diskSpec": "boot_disk_size_gb",
    "replicaCount": "replica_count",
    "containerSpec.imageUri": "image_uri",
    "containerSpec.args": "args",
    "containerSpec.command": "command",
    "containerSpec.env": "env",
}


def request_field_for(path: str, *, workers_explicit: dict[str, Any]) -> str:
    """Map a CustomJob field path to the job-request field a user can change."""
    if path.startswith("displayName"):
        return "name"
    if path.startswith("jobSpec.scheduling.strategy"):
        return "spot"
    if path.startswith("jobSpec.scheduling"):
        return "restart_job_on_worker_restart"
    prefix = "jobSpec.workerPoolSpecs["
    if not path.startswith(prefix):
        return ""
    index_text, _, rest = path[len(prefix):].partition("]")
    rest = rest.lstrip(".")
    pool = "chief" if index_text == "0" else "workers"
    for spec_path, name in _MACHINE_PATHS.items():
        if rest == spec_path or rest.startswith((spec_path + ".", spec_path + "[")):
            if name in ("image_uri", "args", "command", "env"):
                return name
            if (pool == "workers" and name in _inherited_fields(workers_explicit)
                    and not workers_explicit.get(name)):
                # The workers pool inherited this from the chief: the chief's field is at fault.
                return f"chief.{name}"
            return f"{pool}.{name}"
    return pool


def for_attempt(custom_job: dict[str, Any], *, display_name: str, labels: dict[str, str],
                output_uri: str) -> dict[str, Any]:
    """The CustomJob of one attempt: deterministic display name, labels and output folder."""
    job = {**custom_job, "displayName": display_name, "labels": labels}
    job["jobSpec"] = {**custom_job["jobSpec"],
                      "baseOutputDirectory": {"outputUriPrefix": output_uri}}
    return job
