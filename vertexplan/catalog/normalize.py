"""Every spelling of a CustomJob that gcloud, the REST API and the Python SDK accept, written
the one way the rules read: REST JSON camelCase.

* snake_case keys (the protos' own names, as ``aiplatform.CustomJob(worker_pool_specs=...)``
  and the GAPIC dicts write them) become camelCase, as the SDK's conversion and Vertex's JSON
  parser do. Map keys (labels) are the user's and stay as written.
* ``workerPoolSpecs`` given as one mapping becomes a list of one, and a scalar ``command`` or
  ``args`` a list of one string: gcloud's apitools wraps a single value in a list the same way.

Nothing is dropped and no string is changed: an unknown key is kept (under its camelCase
spelling when it has one) so the field rule can refuse it on its own path.
"""

from __future__ import annotations

import copy
from typing import Any

from vertexplan.catalog.schema import LIST_OF, MESSAGES, camel

_SCALAR_LISTS = {("ContainerSpec", "command"), ("ContainerSpec", "args"),
                 ("PythonPackageSpec", "args"), ("PythonPackageSpec", "packageUris"),
                 ("CustomJobSpec", "reservedIpRanges"), ("ReservationAffinity", "values")}


def normalize_custom_job(job: Any) -> tuple[Any, list[str]]:
    """(a camelCase copy of ``job``, what was rewritten); ``job`` itself is not changed."""
    notes: list[str] = []
    if not isinstance(job, dict):
        return job, notes
    return _message("CustomJob", copy.deepcopy(job), "", notes), notes


def _message(message: str, obj: dict[str, Any], path: str, notes: list[str]) -> dict[str, Any]:
    fields = MESSAGES[message]
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = key
        if isinstance(key, str) and key not in fields and camel(key) in fields:
            name = camel(key)
            if name in obj:  # both spellings given: keep both, the rules see the conflict
                name = key
        kind = fields.get(name) if isinstance(name, str) else None
        where = f"{path}.{name}" if path else str(name)
        if kind is None:
            out[name] = value
            continue
        if (message, name) in _SCALAR_LISTS and isinstance(value, str | int | float) \
                and not isinstance(value, bool):
            notes.append(f"{where} was a single value; read as a list of one, as gcloud does")
            value = [value]
        if kind.startswith(LIST_OF):
            inner = kind.removeprefix(LIST_OF)
            if isinstance(value, dict) and message == "CustomJobSpec":
                notes.append(f"{where} was a single mapping; read as a list of one, as gcloud "
                             "does")
                value = [value]
            if isinstance(value, list):
                value = [_message(inner, v, f"{where}[{i}]", notes) if isinstance(v, dict)
                         else v for i, v in enumerate(value)]
        elif kind in MESSAGES and isinstance(value, dict):
            value = _message(kind, value, where, notes)
        out[name] = value
    return out
