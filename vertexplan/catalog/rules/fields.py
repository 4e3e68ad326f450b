"""Unknown field names, at every level of the CustomJob: an error on the key's own path.

Vertex's REST parser refuses a name it does not know (HTTP 400 "Unknown name"), gcloud refuses a
--config file with "unexpected fields". Accepting such a key would drop what the user asked for
(``useSpot: true`` gives an on-demand job), so every key of every object is checked against the
v1 message tree in ``schema.py`` and an unknown one is refused with the nearest valid name.
snake_case names are the protos' own and Vertex accepts them; ``normalize.py`` has turned them
into camelCase before the rules run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError, child, item
from vertexplan.catalog.schema import LIST_OF, MAP_KINDS, MESSAGES, SCALAR, camel, field_kind
from vertexplan.catalog.view import JobView

# Names people write for something Vertex spells differently: said outright, not guessed.
_MEANT: dict[tuple[str, str], tuple[str, str]] = {
    ("WorkerPoolSpec", "useSpot"): ("jobSpec.scheduling.strategy",
                                    "spot VMs are asked for with scheduling.strategy: SPOT"),
    ("Scheduling", "preemptible"): ("strategy", "spot (preemptible) VMs are scheduling.strategy: "
                                                "SPOT"),
    ("Scheduling", "useSpot"): ("strategy", "spot VMs are scheduling.strategy: SPOT"),
    ("MachineSpec", "gpuCount"): ("acceleratorCount", "the number of GPUs is acceleratorCount"),
    ("MachineSpec", "gpuType"): ("acceleratorType", "the GPU model is acceleratorType"),
    ("ContainerSpec", "workingDir"): ("command", "Vertex has no working directory field: set "
                                                 "WORKDIR in the image or cd in the command"),
    ("CustomJob", "priority"): ("jobSpec.scheduling.strategy",
                                "Vertex has no job priority: FLEX_START or SPOT choose how the "
                                "job waits for capacity"),
    ("CustomJobSpec", "timeout"): ("scheduling.timeout", "the timeout is scheduling.timeout"),
}


def nearest(key: str, names: list[str]) -> str:
    """The valid name closest to ``key`` (there always is one)."""
    folded = {n.lower(): n for n in names}
    close = difflib.get_close_matches(key.lower(), list(folded), n=1, cutoff=0.0)
    return folded[close[0]] if close else names[0]


def _walk(message: str, obj: object, path: str) -> Iterator[FieldError]:
    if not isinstance(obj, dict):
        return
    fields = MESSAGES[message]
    for key, value in obj.items():
        if not isinstance(key, str):
            yield FieldError(path or "", f"{path or 'the job'} has a key {key!r} that is not a "
                             "string")
            continue
        kind = field_kind(message, key)
        where = child(path, key)
        if kind is None:
            yield _unknown(message, key, where, sorted(fields))
            continue
        if key not in fields and camel(key) in obj:
            yield FieldError(where, f"{key!r} and {camel(key)!r} are the same {message} "
                             "field written twice (Vertex refuses a field given twice): keep "
                             f"{camel(key)}", (camel(key),))
            continue
        if kind == SCALAR or kind in MAP_KINDS:
            continue
        if kind.startswith(LIST_OF):
            inner = kind.removeprefix(LIST_OF)
            for i, entry in enumerate(value if isinstance(value, list) else ()):
                yield from _walk(inner, entry, item(where, i))
        else:
            yield from _walk(kind, value, where)


def _unknown(message: str, key: str, where: str, names: list[str]) -> FieldError:
    meant = _MEANT.get((message, key))
    if meant:
        name, why = meant
        return FieldError(where, f"{key!r} is not a {message} field (Vertex answers 400 "
                          f"\"Unknown name\"): {why}; did you mean {name}?", (name,))
    best = nearest(key, names)
    return FieldError(where, f"{key!r} is not a {message} field (Vertex answers 400 \"Unknown "
                      f"name\"); did you mean {best}? {message} has: {', '.join(names)}",
                      (best,))


def check_field_names(view: JobView) -> Iterator[FieldError]:
    yield from _walk("CustomJob", view.job, "")
