"""The Model (and its versions), Endpoint, PersistentResource and Operations services'
resources in one SQLite table, next to the jobs, so an emulator restart keeps them: each kind
in a Store of its own (store.py), a row holding the serialized aiplatform.v1 (or longrunning)
message, its parent (projects/P/locations/L) and its creation order, which lists follow."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from google.protobuf import message

from localvertex.core.resources import location_of
from localvertex.core.store import Store, Table

M = TypeVar("M", bound=message.Message)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS serving_objects (
    kind TEXT NOT NULL,          -- model | model_version | endpoint | ... (object_store)
    name TEXT NOT NULL,          -- the full resource name
    parent TEXT NOT NULL,        -- projects/P/locations/L
    seq INTEGER NOT NULL,        -- creation order, for listing
    blob BLOB NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE INDEX IF NOT EXISTS serving_by_parent ON serving_objects (kind, parent, seq);
"""


def object_store(db_path: Path, kind: str, cls: type[M]) -> Store[M]:
    """The resources of one kind ("model", "model_version", "endpoint", "persistent_resource",
    "operation"),
    each a `cls` message keyed by its name, oldest first; select("parent = ?", (parent,))
    lists those under a parent."""
    return Store(db_path, Table(
        name="serving_objects",
        schema=_SCHEMA,
        columns=("name", "parent", "blob"),
        encode=lambda value: (value.name, location_of(value.name), value.SerializeToString()),
        decode=lambda row: cls.FromString(row[2]),
        order="seq",
        scope=(("kind", kind),),
        on_insert=(("seq", "(SELECT coalesce(max(seq), 0) + 1 FROM serving_objects)"),),
    ))
