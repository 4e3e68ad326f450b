"""A cluster request: what the form and the API ask for, read into typed values (a pool's
machine, replicas, autoscaling bounds and disk; the Ray version and head pool)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from vertexplan.clusters.ray_versions import DEFAULT_VERSION


@dataclass(frozen=True)
class PoolRequest:
    id: str
    machine_type: str
    replica_count: int = 1
    accelerator_type: str = ""
    accelerator_count: int = 0
    min_replica_count: int | None = None  # autoscaling bounds; both or neither
    max_replica_count: int | None = None
    boot_disk_type: str = "pd-ssd"
    boot_disk_size_gb: int = 100


@dataclass(frozen=True)
class RayRequest:
    version: str = DEFAULT_VERSION
    python: str = ""  # empty: the newest the version's images carry
    image_uri: str = ""  # empty: Vertex's prebuilt image for the version
    head_pool_id: str = ""  # empty: the first pool


@dataclass(frozen=True)
class ClusterRequest:
    resource_id: str
    pools: tuple[PoolRequest, ...]
    display_name: str = ""
    network: str = ""
    service_account: str = ""
    ray: RayRequest | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
