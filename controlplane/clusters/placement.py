"""A job placed on a cluster (CustomJobSpec.persistentResourceId): it must name a running
cluster of the job's own team, and fit its pools (vertexplan.clusters.placement). Another
team's cluster reads as no cluster at all."""

from __future__ import annotations

from typing import Any

from contract import labels as contract_labels
from controlplane.clusters.models import Cluster
from vertexplan.clusters.placement import job_fits


def violations(custom_job: dict[str, Any], team: Any) -> list[str]:
    spec = custom_job.get("jobSpec") or {}
    resource_id = spec.get("persistentResourceId")
    if not resource_id:
        return []
    running = Cluster.objects.filter(team=team, state__in=[Cluster.State.RUNNING,
                                                           Cluster.State.UPDATING])
    pk = contract_labels.parse_cluster_resource_id(str(resource_id))
    cluster = running.filter(pk=pk).first() if pk is not None else None
    if cluster is None:
        names = ", ".join(f"{c.vertex_resource_id} ({c.name})" for c in running[:10]) or "none"
        return [f"{str(resource_id)[:70]!r} is not a running cluster of your team; running: "
                f"{names}"]
    return job_fits(custom_job, cluster.resource)
