"""Misspelled field names: a typo in the JSON would otherwise drop a setting silently.

Vertex's REST parser refuses names it does not know, but only at submit time and without a
suggestion; and it also accepts snake_case names, which the rules here (reading camelCase, as
Vertex writes it) would not see. A key is flagged only when it is close to a known field: other
unknown keys are left for Vertex to judge, since new fields appear in the API over time.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError, child
from vertexplan.catalog.view import JobView

_FIELDS: dict[str, frozenset[str]] = {
    "CustomJob": frozenset(
        {
            "name",
            "displayName",
            "jobSpec",
            "state",
            "createTime",
            "startTime",
            "endTime",
            "updateTime",
            "error",
            "labels",
            "encryptionSpec",
            "webAccessUris",
            "satisfiesPzs",
            "satisfiesPzi",
        }
    ),
    "CustomJobSpec": frozenset(
        {
            "persistentResourceId",
            "workerPoolSpecs",
            "scheduling",
            "serviceAccount",
            "network",
            "reservedIpRanges",
            "pscInterfaceConfig",
            "baseOutputDirectory",
            "protectedArtifactLocationId",
            "tensorboard",
            "enableWebAccess",
            "enableDashboardAccess",
            "experiment",
            "experimentRun",
            "models",
        }
    ),
    "WorkerPoolSpec": frozenset(
        {
            "containerSpec",
            "pythonPackageSpec",
            "machineSpec",
            "replicaCount",
            "nfsMounts",
            "lustreMounts",
            "diskSpec",
        }
    ),
    "MachineSpec": frozenset(
        {
            "machineType",
            "acceleratorType",
            "acceleratorCount",
            "gpuPartitionSize",
            "tpuTopology",
            "reservationAffinity",
            "multihostGpuNodeCount",
        }
    ),
    "DiskSpec": frozenset({"bootDiskType", "bootDiskSizeGb"}),
    "ContainerSpec": frozenset({"imageUri", "command", "args", "env"}),
    "PythonPackageSpec": frozenset(
        {"executorImageUri", "packageUris", "pythonModule", "args", "env"}
    ),
    "Scheduling": frozenset(
        {
            "timeout",
            "restartJobOnWorkerRestart",
            "strategy",
            "disableRetries",
            "maxWaitDuration",
        }
    ),
    "GcsDestination": frozenset({"outputUriPrefix"}),
    "EnvVar": frozenset({"name", "value"}),
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _objects(view: JobView) -> Iterator[tuple[str, str, object]]:
    """(message name, path, object) for every object of a known message in the spec."""
    yield "CustomJob", "", view.job
    yield "CustomJobSpec", "jobSpec", view.job_spec.value
    yield "Scheduling", view.scheduling.path, view.scheduling.value
    out = view.job_spec.value.get("baseOutputDirectory") if view.job_spec.value else None
    yield "GcsDestination", "jobSpec.baseOutputDirectory", out
    for pool in view.pools:
        yield "WorkerPoolSpec", pool.path, pool.raw
        yield "MachineSpec", pool.machine_spec.path, pool.machine_spec.value
        yield "DiskSpec", pool.disk_spec.path, pool.disk_spec.value
        for spec, message in (
            (pool.container_spec, "ContainerSpec"),
            (pool.python_package_spec, "PythonPackageSpec"),
        ):
            yield message, spec.path, spec.value
            env = spec.value.get("env") if isinstance(spec.value, dict) else None
            for i, entry in enumerate(env if isinstance(env, list) else ()):
                yield "EnvVar", f"{spec.path}.env[{i}]", entry


def check_field_names(view: JobView) -> Iterator[FieldError]:
    for message, path, obj in _objects(view):
        if not isinstance(obj, dict):
            continue
        known = _FIELDS[message]
        for key in obj:
            if not isinstance(key, str) or key in known:
                continue
            camel = _camel(key)
            if camel in known:
                yield FieldError(
                    child(path, key),
                    f"{key!r}: Vertex's REST JSON spells this {message} field "
                    f"{camel}, which is how it is read here",
                    (camel,),
                )
                continue
            close = difflib.get_close_matches(camel, known, n=1, cutoff=0.8)
            if close:
                yield FieldError(
                    child(path, key),
                    f"{key!r} is not a {message} field; did you mean {close[0]}?",
                    tuple(close),
                )
