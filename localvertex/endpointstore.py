"""Models, Endpoints, PersistentResources and long-running Operations in SQLite, next to the
jobs, so an emulator restart keeps them (and redeploys what was deployed).

Each row holds the serialized aiplatform.v1 message; every change is a read-modify-write of one
row under one lock, as in jobstore.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from google.cloud import aiplatform_v1
from google.longrunning import operations_pb2
from google.protobuf import message

from localvertex.cloudlogging.store import connect

ModelPb = aiplatform_v1.Model.pb()
EndpointPb = aiplatform_v1.Endpoint.pb()
PersistentResourcePb = aiplatform_v1.PersistentResource.pb()
OperationPb = operations_pb2.Operation

M = TypeVar("M", bound=message.Message)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS serving_objects (
    kind TEXT NOT NULL,          -- model | endpoint | persistent_resource | operation
    name TEXT NOT NULL,          -- the full resource name
    parent TEXT NOT NULL,        -- projects/P/locations/L
    seq INTEGER NOT NULL,        -- creation order, for listing
    blob BLOB NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE INDEX IF NOT EXISTS serving_by_parent ON serving_objects (kind, parent, seq);
"""

_TYPES: dict[str, type[message.Message]] = {
    "model": ModelPb,
    "endpoint": EndpointPb,
    # Persistent resources share the table so their operations are served by the same
    # google.longrunning.Operations (operations.py).
    "persistent_resource": PersistentResourcePb,
    "operation": OperationPb,
}


class Conflict(Exception):
    """A resource with that name exists already."""


class ServingStore:
    def __init__(self, db_path: Path) -> None:
        self._conn = connect(db_path)
        self._conn.executescript(_SCHEMA)
        self._conn.commit()
        self._lock = threading.RLock()
        row = self._conn.execute("SELECT max(seq) FROM serving_objects").fetchone()
        self._seq = int(row[0] or 0)
        self._last_id = 0

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def new_id(self) -> str:
        """Digits, like Vertex's generated ids, from the clock; never reused in a run."""
        with self._lock:
            self._last_id = max(time.time_ns() // 1000, self._last_id + 1)
            return str(self._last_id)

    def insert(self, kind: str, name: str, parent: str, value: message.Message) -> None:
        with self._lock:
            if self._get(kind, name) is not None:
                raise Conflict(name)
            self._seq += 1
            self._conn.execute(
                "INSERT INTO serving_objects (kind, name, parent, seq, blob) VALUES (?,?,?,?,?)",
                (kind, name, parent, self._seq, value.SerializeToString()),
            )
            self._conn.commit()

    def get(self, kind: str, name: str) -> message.Message | None:
        with self._lock:
            return self._get(kind, name)

    def _get(self, kind: str, name: str) -> message.Message | None:
        row = self._conn.execute(
            "SELECT blob FROM serving_objects WHERE kind = ? AND name = ?", (kind, name)
        ).fetchone()
        return _TYPES[kind].FromString(row[0]) if row else None

    def update(self, kind: str, name: str, change: Callable[[M], None]) -> M:
        """Apply `change` to the stored message and save it; KeyError if it is gone."""
        with self._lock:
            value = self._get(kind, name)
            if value is None:
                raise KeyError(name)
            change(value)  # type: ignore[arg-type]
            self._conn.execute(
                "UPDATE serving_objects SET blob = ? WHERE kind = ? AND name = ?",
                (value.SerializeToString(), kind, name),
            )
            self._conn.commit()
            return value  # type: ignore[return-value]

    def put(self, kind: str, name: str, parent: str, value: message.Message) -> None:
        """Insert or replace (operations are rewritten whole when they finish)."""
        with self._lock:
            if self._get(kind, name) is None:
                self.insert(kind, name, parent, value)
                return
            self._conn.execute(
                "UPDATE serving_objects SET blob = ? WHERE kind = ? AND name = ?",
                (value.SerializeToString(), kind, name),
            )
            self._conn.commit()

    def list(self, kind: str, parent: str | None = None) -> list[message.Message]:
        """Oldest first."""
        with self._lock:
            if parent is None:
                rows = self._conn.execute(
                    "SELECT blob FROM serving_objects WHERE kind = ? ORDER BY seq", (kind,)
                ).fetchall()
            else:
                rows = self._conn.execute(
                    "SELECT blob FROM serving_objects WHERE kind = ? AND parent = ? ORDER BY seq",
                    (kind, parent),
                ).fetchall()
        return [_TYPES[kind].FromString(r[0]) for r in rows]

    def delete(self, kind: str, name: str) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM serving_objects WHERE kind = ? AND name = ?", (kind, name)
            )
            self._conn.commit()
