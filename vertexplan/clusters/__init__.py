"""Persistent resources (Ray on Vertex AI clusters): compose one from a request, check it with
Vertex's rules and the catalogue, and price it per hour while it exists.

    from vertexplan.clusters import compose_persistent_resource
    plan = compose_persistent_resource(request, region="us-central1")
    plan.errors or plan.resource  # field errors, or the PersistentResource as REST JSON
"""

from vertexplan.clusters.compose import ClusterPlan, compose_persistent_resource, parse_request
from vertexplan.clusters.cost import ClusterCost, hourly_cost
from vertexplan.clusters.ray_versions import DEFAULT_VERSION, OFFERED
from vertexplan.clusters.request import ClusterRequest, PoolRequest, RayRequest

__all__ = [
    "DEFAULT_VERSION",
    "OFFERED",
    "ClusterCost",
    "ClusterPlan",
    "ClusterRequest",
    "PoolRequest",
    "RayRequest",
    "compose_persistent_resource",
    "hourly_cost",
    "parse_request",
]
