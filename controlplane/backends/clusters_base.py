"""The port for persistent resources (Ray on Vertex AI clusters) and the Ray jobs on them, and
the plain data that crosses it. A PersistentResource crosses as Vertex's REST JSON (camelCase),
as vertexplan.clusters composes it.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from controlplane.backends.serving_base import Operation

# Ray's job states (Job Submission API); the last three never change again.
RAY_TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})


@dataclass(frozen=True)
class RemoteCluster:
    name: str  # projects/{p}/locations/{l}/persistentResources/{id}
    state: str  # a PersistentResource.State name: PROVISIONING, RUNNING, STOPPING, ERROR, ...
    replicas: dict[str, int] = field(default_factory=dict)  # pool id -> replica_count
    access_uris: dict[str, str] = field(default_factory=dict)
    error_message: str = ""

    @property
    def dashboard(self) -> str:
        """Ray's dashboard (and Job Submission API) address, host:port; empty without Ray."""
        return self.access_uris.get("RAY_DASHBOARD_URI", "")


@dataclass(frozen=True)
class RayJobStatus:
    submission_id: str
    status: str  # PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED
    message: str = ""

    @property
    def ended(self) -> bool:
        return self.status in RAY_TERMINAL


class ClusterBackend(abc.ABC):
    """Persistent resources on Vertex (or the emulator), and Ray's Job Submission API on them."""

    @abc.abstractmethod
    def resource_name(self, resource_id: str) -> str: ...

    @abc.abstractmethod
    def create(self, resource_id: str, resource: dict[str, Any]) -> Operation:
        """Start creating; an id an earlier try already created answers a done operation."""

    @abc.abstractmethod
    def get(self, name: str) -> RemoteCluster:
        """errors.NotFound when it does not exist (any more)."""

    @abc.abstractmethod
    def set_replicas(self, name: str, pools: list[dict[str, Any]]) -> Operation:
        """Change the pools' replica counts (and autoscaling bounds); machines never change."""

    @abc.abstractmethod
    def delete(self, name: str) -> Operation:
        """Start deleting; one already gone answers a done operation."""

    @abc.abstractmethod
    def get_operation(self, name: str) -> Operation: ...

    # -- Ray's Job Submission API at the cluster's dashboard address --------------------------

    @abc.abstractmethod
    def submit_ray_job(self, dashboard: str, submission_id: str, entrypoint: str,
                       runtime_env: dict[str, Any], metadata: dict[str, str],
                       entrypoint_num_cpus: float | None = None) -> str:
        """Submit; a submission id Ray already has answers that id (a retried submit)."""

    @abc.abstractmethod
    def ray_job(self, dashboard: str, submission_id: str) -> RayJobStatus: ...

    @abc.abstractmethod
    def stop_ray_job(self, dashboard: str, submission_id: str) -> bool: ...

    @abc.abstractmethod
    def ray_job_logs(self, dashboard: str, submission_id: str) -> str: ...


@cache
def _backend_class() -> type[ClusterBackend]:
    return import_string(settings.CP_CLUSTER_BACKEND)


def get_cluster_backend() -> ClusterBackend:
    return _backend_class()()
