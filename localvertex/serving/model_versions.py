"""A Model's versions in the emulator's SQLite file, beside the models (core/objects.py).

Model Registry keeps every version of a model under one name: `models/ID@N` (or `@alias`) names
one, `models/ID` the version holding the "default" alias. The models' own store (store.py)
holds that default version of each model, so every reader that knows a model by name (listing,
an endpoint's checks) reads what Vertex answers for the plain name; this store holds every
version, each row keyed `models/ID@N` (the message's name stands in for the key while stored).
Data written before versions were kept has no rows here: its single version is the model row.
"""

from __future__ import annotations

import re
from pathlib import Path

from localvertex.core.objects import object_store
from localvertex.core.store import Store
from localvertex.serving.store import ModelPb

DEFAULT_ALIAS = "default"
# Model.version_aliases: [a-z][a-zA-Z0-9-]{0,126}[a-z0-9] (model.proto); a version ID is digits.
ALIAS = re.compile(r"^[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]$")


class ModelVersions:
    def __init__(self, db_path: Path) -> None:
        self.store: Store = object_store(db_path, "model_version", ModelPb)

    def close(self) -> None:
        self.store.close()

    def of(self, name: str) -> list[ModelPb]:  # type: ignore[valid-type]
        """Every version of the model `name` (models/ID), oldest first, named models/ID."""
        prefix = f"{name}@"
        rows = self.store.select("substr(name, 1, ?) = ?", (len(prefix), prefix))
        return sorted((_named(row, name) for row in rows), key=lambda m: int(m.version_id))

    def find(self, name: str, ref: str) -> ModelPb | None:  # type: ignore[valid-type]
        """The version of `name` that `ref` (a version ID or an alias) names, or None."""
        if ref.isdigit():
            row = self.store.get(f"{name}@{ref}")
            return _named(row, name) if row is not None else None
        return next((m for m in self.of(name) if ref in m.version_aliases), None)

    def put(self, model) -> None:
        """Store (or replace) one version; `model` is named models/ID."""
        stored = ModelPb()
        stored.CopyFrom(model)
        stored.name = f"{model.name}@{model.version_id}"
        self.store.put(stored)

    def delete(self, name: str, version_id: str) -> None:
        self.store.delete(f"{name}@{version_id}")


def _named(row, name: str) -> ModelPb:  # type: ignore[valid-type]
    row.name = name
    return row
