"""The CustomJob message tree of Vertex's v1 API, as its REST JSON names the fields.

Vertex refuses a request with a field it does not know (HTTP 400 "Unknown name"), and gcloud
refuses a --config file with "unexpected fields"; a key dropped here would instead turn a spot
job into an on-demand one without a word. So every key of every object is checked against this
tree (``rules/fields.py``). The tree is written out rather than read from the protos because
this package does not import Google's libraries; ``tests/vertexplan/catalog/test_schema.py``
compares it with ``google.cloud.aiplatform_v1``'s descriptors, so a new API field shows up
there.

A field's kind is the name of a message in ``MESSAGES``, ``LIST_OF + message`` for a repeated
message, ``MAP`` for a map of strings (labels), or ``SCALAR`` for anything else (strings,
numbers, enums, booleans, durations, lists of strings).
"""

from __future__ import annotations

SCALAR = "scalar"
MAP = "map"
LIST_OF = "list:"

MESSAGES: dict[str, dict[str, str]] = {
    "CustomJob": {
        "name": SCALAR, "displayName": SCALAR, "jobSpec": "CustomJobSpec", "state": SCALAR,
        "createTime": SCALAR, "startTime": SCALAR, "endTime": SCALAR, "updateTime": SCALAR,
        "error": "Status", "labels": MAP, "encryptionSpec": "EncryptionSpec",
        "webAccessUris": MAP, "satisfiesPzs": SCALAR, "satisfiesPzi": SCALAR,
    },
    "Status": {"code": SCALAR, "message": SCALAR, "details": SCALAR},
    "EncryptionSpec": {"kmsKeyName": SCALAR},
    "CustomJobSpec": {
        "persistentResourceId": SCALAR, "workerPoolSpecs": LIST_OF + "WorkerPoolSpec",
        "scheduling": "Scheduling", "serviceAccount": SCALAR, "network": SCALAR,
        "reservedIpRanges": SCALAR, "pscInterfaceConfig": "PscInterfaceConfig",
        "baseOutputDirectory": "GcsDestination", "protectedArtifactLocationId": SCALAR,
        "tensorboard": SCALAR, "enableWebAccess": SCALAR, "enableDashboardAccess": SCALAR,
        "experiment": SCALAR, "experimentRun": SCALAR, "models": SCALAR,
    },
    "PscInterfaceConfig": {"networkAttachment": SCALAR,
                           "dnsPeeringConfigs": LIST_OF + "DnsPeeringConfig"},
    "DnsPeeringConfig": {"domain": SCALAR, "targetProject": SCALAR, "targetNetwork": SCALAR},
    "GcsDestination": {"outputUriPrefix": SCALAR},
    "WorkerPoolSpec": {
        "containerSpec": "ContainerSpec", "pythonPackageSpec": "PythonPackageSpec",
        "machineSpec": "MachineSpec", "replicaCount": SCALAR,
        "nfsMounts": LIST_OF + "NfsMount", "lustreMounts": LIST_OF + "LustreMount",
        "diskSpec": "DiskSpec",
    },
    "ContainerSpec": {"imageUri": SCALAR, "command": SCALAR, "args": SCALAR,
                      "env": LIST_OF + "EnvVar"},
    "PythonPackageSpec": {"executorImageUri": SCALAR, "packageUris": SCALAR,
                          "pythonModule": SCALAR, "args": SCALAR, "env": LIST_OF + "EnvVar"},
    "EnvVar": {"name": SCALAR, "value": SCALAR},
    "MachineSpec": {
        "machineType": SCALAR, "acceleratorType": SCALAR, "acceleratorCount": SCALAR,
        "gpuPartitionSize": SCALAR, "tpuTopology": SCALAR,
        "reservationAffinity": "ReservationAffinity",
    },
    "ReservationAffinity": {"reservationAffinityType": SCALAR, "key": SCALAR, "values": SCALAR},
    "DiskSpec": {"bootDiskType": SCALAR, "bootDiskSizeGb": SCALAR},
    "NfsMount": {"server": SCALAR, "path": SCALAR, "mountPoint": SCALAR},
    "LustreMount": {"instanceIp": SCALAR, "volumeHandle": SCALAR, "filesystem": SCALAR,
                    "mountPoint": SCALAR},
    "Scheduling": {"timeout": SCALAR, "restartJobOnWorkerRestart": SCALAR, "strategy": SCALAR,
                   "disableRetries": SCALAR, "maxWaitDuration": SCALAR},
}

# Messages whose JSON keys are the user's own (map entries) and never checked.
MAP_KINDS = frozenset({MAP})


def snake(name: str) -> str:
    """camelCase -> the proto's own snake_case name (which Vertex's JSON parser also takes)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def field_kind(message: str, key: str) -> str | None:
    """The kind of ``key`` in ``message`` (camelCase or snake_case); None when unknown."""
    fields = MESSAGES[message]
    if key in fields:
        return fields[key]
    return fields.get(camel(key)) if "_" in key else None
