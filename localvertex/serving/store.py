"""Models and Endpoints in the emulator's SQLite file (core/objects.py), next to the jobs, so an
emulator restart keeps them (and redeploys what was deployed: deployments.py)."""

from __future__ import annotations

from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.core.objects import object_store
from localvertex.core.store import Store

ModelPb = aiplatform_v1.Model.pb()
EndpointPb = aiplatform_v1.Endpoint.pb()


def model_store(db_path: Path) -> Store:
    return object_store(db_path, "model", ModelPb)


def endpoint_store(db_path: Path) -> Store:
    return object_store(db_path, "endpoint", EndpointPb)
