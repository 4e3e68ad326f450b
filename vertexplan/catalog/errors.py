"""FieldError and the field paths it points at.

A path names a field of the CustomJob exactly as it is written in Vertex's REST JSON:
dotted camelCase names, ``[i]`` for list items and ``["key"]`` (a JSON string) for map keys and
for names that are not plain identifiers:

    jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount
    labels["team"]

Every error points either at a field present in the spec or, for a required field that is
missing, at the position it should be written to; those positions are listed in
``MISSING_FIELD_PATHS`` so forms can attach the message to the right input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEGMENT = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class FieldError:
    path: str  # e.g. "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"
    message: str  # names the field, says why, says what would be valid
    suggestions: tuple[str, ...] = ()  # e.g. ("a2-highgpu-2g",)


# Required fields an error may point at although the spec lacks them ("[*]": any index).
MISSING_FIELD_PATHS: frozenset[str] = frozenset(
    {
        "displayName",
        "jobSpec",
        "jobSpec.workerPoolSpecs",
        "jobSpec.workerPoolSpecs[*].machineSpec",
        "jobSpec.workerPoolSpecs[*].machineSpec.machineType",
        "jobSpec.workerPoolSpecs[*].machineSpec.acceleratorType",
        "jobSpec.workerPoolSpecs[*].machineSpec.acceleratorCount",
        "jobSpec.workerPoolSpecs[*].machineSpec.tpuTopology",
        "jobSpec.workerPoolSpecs[*].machineSpec.reservationAffinity.reservationAffinityType",
        "jobSpec.workerPoolSpecs[*].machineSpec.reservationAffinity.key",
        "jobSpec.workerPoolSpecs[*].machineSpec.reservationAffinity.values",
        "jobSpec.workerPoolSpecs[*].replicaCount",
        "jobSpec.workerPoolSpecs[*].containerSpec",
        "jobSpec.workerPoolSpecs[*].containerSpec.imageUri",
        "jobSpec.workerPoolSpecs[*].containerSpec.env[*].name",
        "jobSpec.workerPoolSpecs[*].pythonPackageSpec.executorImageUri",
        "jobSpec.workerPoolSpecs[*].pythonPackageSpec.packageUris",
        "jobSpec.workerPoolSpecs[*].pythonPackageSpec.pythonModule",
        "jobSpec.workerPoolSpecs[*].pythonPackageSpec.env[*].name",
        "jobSpec.baseOutputDirectory.outputUriPrefix",
        "jobSpec.workerPoolSpecs[*].nfsMounts[*].server",
        "jobSpec.workerPoolSpecs[*].nfsMounts[*].path",
        "jobSpec.workerPoolSpecs[*].nfsMounts[*].mountPoint",
        "jobSpec.pscInterfaceConfig.networkAttachment",
    }
)


def child(path: str, key: str) -> str:
    """The path of ``key`` inside the object at ``path``."""
    if _IDENT.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def entry(path: str, key: str) -> str:
    """The path of a map entry (labels): always the bracket form, ``labels["team"]``."""
    return f"{path}[{json.dumps(key)}]"


def item(path: str, index: int) -> str:
    return f"{path}[{index}]"


def path_template(path: str) -> str:
    """The path with list indices replaced by ``[*]``, to compare with MISSING_FIELD_PATHS."""
    return _INDEX.sub("[*]", path)


def split_path(path: str) -> list[str | int]:
    """The keys and indices of a path; ValueError if it is not one this module writes."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if not match or (match.group(0).startswith(".") and pos == 0):
            raise ValueError(f"malformed path {path!r} at {pos}")
        name, index, quoted = match.groups()
        if name is not None:
            if pos and not match.group(0).startswith("."):
                raise ValueError(f"malformed path {path!r} at {pos}")
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(json.loads(quoted))
        pos = match.end()
    return parts


_MISSING = object()


def resolve_path(document: object, path: str) -> tuple[bool, object]:
    """(True, value) when ``path`` names a field present in ``document``, else (False, None)."""
    node = document
    for part in split_path(path):
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False, None
            node = node[part]
        else:
            if not isinstance(node, dict):
                return False, None
            node = node.get(part, _MISSING)
            if node is _MISSING:
                return False, None
    return True, node


def parent_path(path: str) -> str:
    """The path of the object holding the last segment ('' for a top-level field)."""
    parts = split_path(path)[:-1]
    out = ""
    for part in parts:
        out = item(out, part) if isinstance(part, int) else child(out, part)
    return out
