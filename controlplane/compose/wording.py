"""The compose form's words for what the API calls by its paths.

Validation speaks the REST API's language (``workerPoolSpecs[0].machineSpec.acceleratorCount``)
because the API and the CLI need it; the form shows the same message with the names of the
form's own fields, so a person knows which box to change.
"""

from __future__ import annotations

import re

# Vertex's pool indices and what the form calls each pool.
POOL_NAMES = ("Chief", "Workers", "workerpool2", "Evaluators")

# API field names, longest first so that a longer name is never half-replaced.
FIELD_WORDS = {
    "acceleratorCount": "Accelerators per replica",
    "acceleratorType": "Accelerator",
    "machineType": "Machine type",
    "replicaCount": "Replicas",
    "bootDiskSizeGb": "Boot disk GB",
    "bootDiskType": "Boot disk",
    "tpuTopology": "TPU topology",
    "imageUri": "Image URI",
    "baseOutputDirectory": "Output directory",
    "serviceAccount": "Service account",
    "maxWaitDuration": "Max wait (hours)",
    "restartJobOnWorkerRestart": "Restart job on worker restart",
}

_POOL = re.compile(r"workerPoolSpecs\[(\d+)\](?:\.(?:machineSpec|diskSpec|containerSpec))?\.?")
_ENV = re.compile(r"\benv\[(\d+)\]\.(name|value)\b")
_WORDS = re.compile(r"\b(" + "|".join(sorted(FIELD_WORDS, key=len, reverse=True)) + r")\b")


def _pool(match: re.Match[str]) -> str:
    index = int(match.group(1))
    name = POOL_NAMES[index] if index < len(POOL_NAMES) else f"workerpool{index}"
    return f"{name}: "


def for_the_form(message: str) -> str:
    """``message`` with API paths and field names replaced by the form's labels."""
    text = _POOL.sub(_pool, message)
    text = _ENV.sub(lambda m: f"environment variable {int(m.group(1)) + 1} ({m.group(2)})",
                    text)
    text = _WORDS.sub(lambda m: f"\N{LEFT DOUBLE QUOTATION MARK}{FIELD_WORDS[m.group(1)]}"
                                f"\N{RIGHT DOUBLE QUOTATION MARK}", text)
    return text.replace(": : ", ": ")
