"""Celery tasks for clusters: thin wrappers that pass ids as strings (controlplane.core.queue).
A step that is not settled queues itself again shortly; the sweep catches whatever is lost."""

from __future__ import annotations

from controlplane.backends.errors import TransientBackendError
from controlplane.clusters import idle, lifecycle
from controlplane.core.queue import send_now, task


@task(retry_on=(TransientBackendError,), max_retries=12)
def reconcile_cluster(cluster_id: str) -> None:
    if lifecycle.reconcile(int(cluster_id)):
        send_now(lifecycle.TASKS + "reconcile_cluster", cluster_id, countdown=lifecycle.POLL_S)


@task(retry_on=(TransientBackendError,), max_retries=12)
def advance_ray_job(job_id: str) -> None:
    if lifecycle.advance_ray_job(int(job_id)):
        send_now(lifecycle.TASKS + "advance_ray_job", job_id, countdown=lifecycle.POLL_S)


@task(singleton_ttl_s=120)
def reconcile_clusters() -> None:
    lifecycle.reconcile_all()
    idle.flag_idle_clusters()


@task(singleton_ttl_s=120)
def delete_idle_clusters() -> None:
    """Clusters idle past their team's limit (TeamPolicy.delete_idle_clusters_after_min)."""
    idle.delete_idle_clusters()
