"""A cluster request (what the form and the API take) -> a PersistentResource as Vertex's REST
JSON, with every field error found on the way.

Vertex's rules (VERTEX_FACTS.md A2): the resource id and pool ids match
`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`; at least one resource pool; a pool's machine spec is
required and immutable; autoscaling min may be 0 only on a Ray cluster; the Ray head runs on
the first pool unless another is named; the Ray version is one Vertex offers. A pool's machine,
accelerators and disk are checked by the same catalogue rules a CustomJob's worker pool is.

Rules on the Ray head pool that the facts do not state (UNCONFIRMED; taken from the Ray on
Vertex SDK's cluster_init, which refuses them before calling the API): the head pool has exactly
one replica and no autoscaling, and takes GPUs only (no TPU machine runs the Ray head).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract import labels as contract_labels
from vertexplan.catalog import FieldError, validate_custom_job
from vertexplan.clusters.ray_checks import check_ray
from vertexplan.clusters.ray_versions import DEFAULT_VERSION, default_python, image_uri
from vertexplan.clusters.request import ClusterRequest, PoolRequest, RayRequest
from vertexplan.digits import ascii_int

ID_PATTERN = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
ID_RULE = ("1 to 63 characters: lowercase letters, digits and hyphens, starting with a letter "
           "and not ending with a hyphen")
MAX_POOLS = 16
MAX_REPLICAS = 1000
# Service accounts are emails; networks are projects/{number}/global/networks/{name}.
SERVICE_ACCOUNT = re.compile(
    r"^[a-z][a-z0-9-]{4,61}[a-z0-9]@[a-z0-9.-]+\.iam\.gserviceaccount\.com$")
NETWORK = re.compile(r"^projects/[0-9]{1,20}/global/networks/[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class ClusterPlan:
    request: ClusterRequest | None
    resource: dict[str, Any] | None  # the PersistentResource (REST JSON), None on errors
    errors: tuple[FieldError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def _int(raw: object, path: str, errors: list[FieldError], default: int | None) -> int | None:
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        if isinstance(raw, str) and ascii_int(raw.strip()) is not None:
            return ascii_int(raw.strip())
        errors.append(FieldError(path, f"{path} must be a whole number, got {raw!r}"))
        return default
    return raw


def _str(raw: object, path: str, errors: list[FieldError]) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        errors.append(FieldError(path, f"{path} must be a string"))
        return ""
    return raw.strip()


def parse_request(data: Mapping[str, Any]) -> tuple[ClusterRequest | None, list[FieldError]]:
    """Read a request given as JSON (snake_case keys, as the API and the form send it)."""
    errors: list[FieldError] = []
    if not isinstance(data, Mapping):
        return None, [FieldError("", "the cluster must be a JSON object")]
    raw_pools = data.get("pools")
    pools: list[PoolRequest] = []
    if not isinstance(raw_pools, list) or not raw_pools:
        errors.append(FieldError("pools", "pools: give at least one resource pool (the first "
                                 "runs the Ray head)"))
        raw_pools = []
    for index, raw in enumerate(raw_pools):
        path = f"pools[{index}]"
        if not isinstance(raw, Mapping):
            errors.append(FieldError(path, f"{path} must be an object"))
            continue
        pools.append(PoolRequest(
            id=_str(raw.get("id"), f"{path}.id", errors),
            machine_type=_str(raw.get("machine_type"), f"{path}.machine_type", errors),
            replica_count=_int(raw.get("replica_count"), f"{path}.replica_count", errors, 1),
            accelerator_type=_str(raw.get("accelerator_type"), f"{path}.accelerator_type", errors),
            accelerator_count=_int(raw.get("accelerator_count"), f"{path}.accelerator_count",
                                   errors, 0),
            min_replica_count=_int(raw.get("min_replica_count"), f"{path}.min_replica_count",
                                   errors, None),
            max_replica_count=_int(raw.get("max_replica_count"), f"{path}.max_replica_count",
                                   errors, None),
            boot_disk_type=_str(raw.get("boot_disk_type"), f"{path}.boot_disk_type", errors)
            or "pd-ssd",
            boot_disk_size_gb=_int(raw.get("boot_disk_size_gb"), f"{path}.boot_disk_size_gb",
                                   errors, 100),
        ))
    ray: RayRequest | None = None
    raw_ray = data.get("ray")
    if isinstance(raw_ray, Mapping):
        ray = RayRequest(
            version=_str(raw_ray.get("version"), "ray.version", errors)
            or DEFAULT_VERSION,
            python=_str(raw_ray.get("python"), "ray.python", errors),
            image_uri=_str(raw_ray.get("image_uri"), "ray.image_uri", errors),
            head_pool_id=_str(raw_ray.get("head_pool_id"), "ray.head_pool_id", errors),
        )
    elif raw_ray not in (None, False):
        errors.append(FieldError("ray", "ray must be an object (version, python, image_uri, "
                                 "head_pool_id) or null for a cluster without a Ray runtime"))
    labels = data.get("labels") or {}
    if not isinstance(labels, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        errors.append(FieldError("labels", "labels must map strings to strings"))
        labels = {}
    request = ClusterRequest(
        resource_id=_str(data.get("resource_id"), "resource_id", errors),
        pools=tuple(pools),
        display_name=_str(data.get("display_name"), "display_name", errors),
        network=_str(data.get("network"), "network", errors),
        service_account=_str(data.get("service_account"), "service_account", errors),
        ray=ray,
        labels=dict(labels),
    )
    return request, errors


def compose_persistent_resource(request: ClusterRequest | Mapping[str, Any],
                                region: str) -> ClusterPlan:
    """The PersistentResource for REQUEST in REGION, or every field error it has."""
    errors: list[FieldError] = []
    if not isinstance(request, ClusterRequest):
        parsed, errors = parse_request(request)
        if parsed is None:
            return ClusterPlan(None, None, tuple(errors))
        request = parsed
    errors += _check_ids(request)
    for index, pool in enumerate(request.pools):
        errors += _check_pool(index, pool, request.ray is not None, region)
    errors += _check_access(request)
    head_index = 0
    if request.ray is not None:
        ray_errors, head_index = check_ray(request)
        errors += ray_errors
    if errors:
        return ClusterPlan(request, None, tuple(dict.fromkeys(errors)))
    return ClusterPlan(request, _resource(request, region, head_index), ())


# -- checks ---------------------------------------------------------------------------------------


def _check_ids(request: ClusterRequest) -> list[FieldError]:
    errors: list[FieldError] = []
    if not ID_PATTERN.match(request.resource_id):
        errors.append(FieldError("resource_id", f"resource_id {request.resource_id!r} is not "
                                 f"a valid persistent resource id: {ID_RULE}"))
    if len(request.display_name) > 128:
        errors.append(FieldError("display_name", "display_name: at most 128 characters"))
    if len(request.pools) > MAX_POOLS:
        errors.append(FieldError("pools", f"pools: at most {MAX_POOLS} resource pools"))
    seen: set[str] = set()
    for index, pool in enumerate(request.pools):
        path = f"pools[{index}].id"
        if not ID_PATTERN.match(pool.id):
            errors.append(FieldError(path, f"{path} {pool.id!r} is not a valid pool id: "
                                     f"{ID_RULE}"))
        elif pool.id in seen:
            errors.append(FieldError(path, f"{path}: another pool is already called "
                                     f"{pool.id!r}; pool ids must differ"))
        seen.add(pool.id)
    return errors


# Catalogue error paths of a one-pool CustomJob -> the request's field names.
_CATALOGUE_FIELDS = {
    "machineSpec.machineType": "machine_type",
    "machineSpec.acceleratorType": "accelerator_type",
    "machineSpec.acceleratorCount": "accelerator_count",
    "machineSpec": "machine_type",
    "diskSpec.bootDiskType": "boot_disk_type",
    "diskSpec.bootDiskSizeGb": "boot_disk_size_gb",
    "diskSpec": "boot_disk_type",
}
_POOL_PREFIX = "jobSpec.workerPoolSpecs[0]."


def _machine_spec(pool: PoolRequest) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": pool.machine_type}
    if pool.accelerator_type:
        spec["acceleratorType"] = pool.accelerator_type
        spec["acceleratorCount"] = pool.accelerator_count
    elif pool.accelerator_count:
        spec["acceleratorCount"] = pool.accelerator_count
    return spec


def _disk_spec(pool: PoolRequest) -> dict[str, Any]:
    return {"bootDiskType": pool.boot_disk_type, "bootDiskSizeGb": pool.boot_disk_size_gb}


def _catalogue_errors(index: int, pool: PoolRequest, region: str) -> list[FieldError]:
    """The catalogue's verdict on the pool's machine, accelerators and disk: the pool is checked
    as the one pool of a CustomJob, and only errors about those fields are kept."""
    job = {"displayName": "cluster-pool", "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": _machine_spec(pool), "replicaCount": 1, "diskSpec": _disk_spec(pool),
        "containerSpec": {"imageUri": "us-docker.pkg.dev/vertex-ai/training/placeholder:latest"},
    }]}}
    errors = []
    for error in validate_custom_job(job, region):
        if not error.path.startswith(_POOL_PREFIX):
            continue
        tail = error.path[len(_POOL_PREFIX):]
        name = next((v for k, v in _CATALOGUE_FIELDS.items() if tail.startswith(k)), None)
        if name is None:
            continue
        message = error.message.replace(_POOL_PREFIX, f"pools[{index}].")
        errors.append(FieldError(f"pools[{index}].{name}", message, error.suggestions))
    return errors


def _check_pool(index: int, pool: PoolRequest, ray: bool, region: str) -> list[FieldError]:
    path = f"pools[{index}]"
    if not pool.machine_type:
        return [FieldError(f"{path}.machine_type", f"{path}.machine_type is required (a "
                           "resource pool's machine spec cannot be changed later)")]
    errors = _catalogue_errors(index, pool, region)
    lo, hi = pool.min_replica_count, pool.max_replica_count
    autoscaling = lo is not None or hi is not None
    floor = 0 if ray and autoscaling else 1
    if not floor <= pool.replica_count <= MAX_REPLICAS:
        errors.append(FieldError(f"{path}.replica_count", f"{path}.replica_count must be "
                                 f"{floor}..{MAX_REPLICAS}, got {pool.replica_count}"))
    if autoscaling:
        if lo is None or hi is None:
            which = "min_replica_count" if lo is None else "max_replica_count"
            errors.append(FieldError(f"{path}.{which}", f"{path}: autoscaling needs both "
                                     "min_replica_count and max_replica_count"))
        else:
            if lo < 0 or (lo == 0 and not ray):
                errors.append(FieldError(
                    f"{path}.min_replica_count",
                    f"{path}.min_replica_count must be at least 1"
                    + ("" if ray else " (0 is allowed only on a Ray cluster)")))
            if hi < max(lo, 1) or hi > MAX_REPLICAS:
                errors.append(FieldError(
                    f"{path}.max_replica_count",
                    f"{path}.max_replica_count must be {max(lo, 1)}..{MAX_REPLICAS} "
                    f"(at least min_replica_count), got {hi}"))
            elif not lo <= pool.replica_count <= hi:
                errors.append(FieldError(
                    f"{path}.replica_count",
                    f"{path}.replica_count {pool.replica_count} must lie within the "
                    f"autoscaling bounds {lo}..{hi}"))
    return errors


def _check_access(request: ClusterRequest) -> list[FieldError]:
    errors = []
    if request.network and not NETWORK.match(request.network):
        errors.append(FieldError("network", "network must be projects/{project number}/global/"
                                 "networks/{name} (a VPC peered with Vertex AI)"))
    if request.service_account and not SERVICE_ACCOUNT.match(request.service_account):
        errors.append(FieldError("service_account", "service_account must be a service "
                                 "account email, NAME@PROJECT.iam.gserviceaccount.com"))
    for key, value in request.labels.items():
        if contract_labels.is_reserved(key):
            # cp-team decides whose user on the machine runs the cluster's nodes (the
            # emulator's team_users.py): only the control plane writes it.
            errors.append(FieldError(f'labels["{key}"]', f"label {key!r}: keys starting with "
                                     f"{contract_labels.PREFIX} are written by the control "
                                     "plane (cp-team); choose another key"))
        elif not re.fullmatch(r"[a-z][a-z0-9_-]{0,62}", key) or not re.fullmatch(
                r"[a-z0-9_-]{0,63}", value):
            errors.append(FieldError(f'labels["{key}"]', "label keys: lowercase letter first, "
                                     "then up to 62 lowercase letters, digits, _ or -; values: "
                                     "up to 63 of the same"))
    return errors


# -- the resource ---------------------------------------------------------------------------------


def _resource(request: ClusterRequest, region: str, head_index: int) -> dict[str, Any]:
    pools = []
    for pool in request.pools:
        entry: dict[str, Any] = {"id": pool.id, "machineSpec": _machine_spec(pool),
                                 "replicaCount": str(pool.replica_count),
                                 "diskSpec": _disk_spec(pool)}
        if pool.min_replica_count is not None and pool.max_replica_count is not None:
            entry["autoscalingSpec"] = {"minReplicaCount": str(pool.min_replica_count),
                                        "maxReplicaCount": str(pool.max_replica_count)}
        pools.append(entry)
    resource: dict[str, Any] = {"displayName": request.display_name or request.resource_id,
                                "resourcePools": pools}
    if request.labels:
        resource["labels"] = dict(request.labels)
    if request.network:
        resource["network"] = request.network
    runtime: dict[str, Any] = {}
    if request.service_account:
        runtime["serviceAccountSpec"] = {"enableCustomServiceAccount": True,
                                         "serviceAccount": request.service_account}
    if request.ray is not None:
        ray = request.ray
        gpu = any(p.accelerator_type for p in request.pools)
        python = ray.python or default_python(ray.version)
        image = ray.image_uri or image_uri(ray.version, python, gpu, region)
        runtime["raySpec"] = {"imageUri": image,
                              "headNodeResourcePoolId": request.pools[head_index].id}
    if runtime:
        resource["resourceRuntimeSpec"] = runtime
    return resource
