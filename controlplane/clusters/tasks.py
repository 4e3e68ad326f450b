"""Celery tasks for clusters: thin wrappers that pass ids as strings (controlplane.core.queue).
A step that is not settled queues itself again shortly; the sweep catches whatever is lost."""

from __future__ import annotations

from controlplane.backends.errors import TransientBackendError
from controlplane.clusters import idle, lifecycle
from controlplane.clusters.models import Cluster, RayJob
from controlplane.core.queue import send_now, task


@task(retry_on=(TransientBackendError,), max_retries=12)
def reconcile_cluster(cluster_id: str) -> None:
    if lifecycle.reconcile(int(cluster_id)):
        send_now(lifecycle.TASKS + "reconcile_cluster", cluster_id, countdown=lifecycle.POLL_S)


@task(retry_on=(TransientBackendError,), max_retries=12)
def advance_ray_job(job_id: str) -> None:
    if lifecycle.advance_ray_job(int(job_id)):
        send_now(lifecycle.TASKS + "advance_ray_job", job_id, countdown=lifecycle.POLL_S)


def _no_cluster_alive() -> bool:
    """Nothing for the sweep: no cluster on its way somewhere or running (the idle flags),
    no Ray job unfinished."""
    return not (Cluster.objects.exclude(state__in=(Cluster.State.DELETED, Cluster.State.FAILED))
                .exists() or
                RayJob.objects.exclude(state__in=(RayJob.State.SUCCEEDED, RayJob.State.FAILED,
                                                  RayJob.State.STOPPED)).exists())


@task(singleton_ttl_s=120, idle=_no_cluster_alive)
def reconcile_clusters() -> None:
    lifecycle.reconcile_all()
    idle.flag_idle_clusters()


@task(singleton_ttl_s=120)
def delete_idle_clusters() -> None:
    """Clusters idle past their team's limit (TeamPolicy.delete_idle_clusters_after_min)."""
    idle.delete_idle_clusters()
