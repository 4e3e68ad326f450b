"""Celery tasks of serving: thin wrappers that pass ids as strings (controlplane.core.queue)."""

from __future__ import annotations

from controlplane.backends.errors import TransientBackendError
from controlplane.core.queue import task
from controlplane.serving import (
    lifecycle,
    packaging,
    prober,
    registry,
    slo,
    trials,
    vertex_latency,
)
from controlplane.serving.models import Endpoint, ModelEntry
from controlplane.serving.trial_models import RuntimeTrial


@task(retry_on=(TransientBackendError,), max_retries=12)
def upload_model(entry_id: str) -> None:
    registry.upload(int(entry_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def package_model(entry_id: str) -> None:
    packaging.submit(int(entry_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def run_runtime_trial(trial_id: str) -> None:
    trials.submit(int(trial_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def create_endpoint(endpoint_id: str) -> None:
    lifecycle.send_create(int(endpoint_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def delete_endpoint(endpoint_id: str) -> None:
    lifecycle.send_delete(int(endpoint_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def deploy(deployment_id: str) -> None:
    lifecycle.send_deploy(int(deployment_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def undeploy(deployment_id: str) -> None:
    lifecycle.send_undeploy(int(deployment_id))


@task(retry_on=(TransientBackendError,), max_retries=12)
def mutate(deployment_id: str) -> None:
    lifecycle.send_mutate(int(deployment_id))


def _nothing_in_flight() -> bool:
    """Nothing for the serving sweep: no model being packaged or uploaded, no endpoint that
    is not gone (one being made or deleted, or one whose deployments' replicas it follows), no
    runtime trial unfinished."""
    E = Endpoint.State
    return not (
        ModelEntry.objects.filter(state__in=(ModelEntry.State.PACKAGING,
                                             ModelEntry.State.UPLOADING)).exists()
        or Endpoint.objects.filter(state__in=(E.CREATING, E.READY, E.DELETING)).exists()
        or RuntimeTrial.objects.filter(state__in=(RuntimeTrial.State.PENDING,
                                                  RuntimeTrial.State.RUNNING)).exists())


def _nothing_to_probe() -> bool:
    return not Endpoint.objects.filter(state=Endpoint.State.READY, probe_enabled=True).exists()


@task(singleton_ttl_s=120, idle=_nothing_in_flight)
def reconcile_serving() -> None:
    lifecycle.reconcile_all()
    trials.reconcile_all()


@task(singleton_ttl_s=3600, long_running=True)
def prune_latency_samples() -> None:
    prober.prune()


@task(singleton_ttl_s=30, idle=_nothing_to_probe)
def probe_endpoints() -> None:
    prober.dispatch()


@task()
def probe_endpoint(endpoint_id: str) -> None:
    # No retry: a failed probe is a data point (an error), not something to do again.
    if prober.probe(int(endpoint_id)) is not None:
        slo.evaluate(int(endpoint_id))


@task(retry_on=(TransientBackendError,), max_retries=3, singleton_ttl_s=300)
def read_monitoring() -> None:
    vertex_latency.sync_all()
