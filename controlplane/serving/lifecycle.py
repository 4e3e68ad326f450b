"""Endpoints and deployments: create, deploy, set autoscaling, undeploy, delete, reconcile.

As controlplane/runs/lifecycle.py: every step locks its row, re-reads the state and does nothing
when there is nothing to do, so a task run twice or after a crash never creates a second resource
(the Vertex ids are derived from primary keys). Vertex's long-running operations are recorded and
polled by the serving sweep (reconcile_all), never waited for inside a task.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.serving_base import (
    DeploySpec,
    EndpointAccess,
    get_serving_backend,
)
from controlplane.core.queue import enqueue, send_now
from controlplane.serving import (
    endpoint_access,
    hardware,
    images,
    outcomes,
    packaging,
    registry,
    traffic,
    vllm_runtime,
)
from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from controlplane.serving.tensorrt_engine import deploy_refusal
from controlplane.teams.models import Team
from vertexplan.catalog import allowed_accelerators, get_machine_type

# Queued by name (controlplane/core/queue.py): services never import a tasks module.
TASKS = "controlplane.serving.tasks."
logger = logging.getLogger(__name__)

D = Deployment.State
E = Endpoint.State
LIVE_DEPLOYMENTS = outcomes.LIVE_DEPLOYMENTS


class ServingError(ValueError):
    """The request cannot be carried out as asked; the message is for the user, and `field`
    names the field at fault when one is."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


# -- endpoints ----------------------------------------------------------------------------------

def create_endpoint(*, team: Team, user: Any, name: str, access: str = Endpoint.Access.PUBLIC,
                    psc_project_allowlist: list[str] | None = None, **probe: Any) -> Endpoint:
    try:
        allowlist = endpoint_access.check(access, psc_project_allowlist or [])
    except endpoint_access.AccessError as exc:
        raise ServingError(str(exc), exc.field) from exc
    if access == Endpoint.Access.PRIVATE:
        # The control plane is outside the consumers' VPCs: it cannot probe a private
        # endpoint, so the prober starts off for one (ProbeSettings can turn it on where the
        # control plane runs inside an allowlisted project's network).
        probe.setdefault("probe_enabled", False)
    with transaction.atomic():
        endpoint = Endpoint.objects.create(team=team, created_by=user, name=name, access=access,
                                           psc_project_allowlist=allowlist, **probe)
        enqueue(TASKS + "create_endpoint", str(endpoint.pk))
    return endpoint


def send_create(endpoint_id: int) -> None:
    backend = get_serving_backend()
    with transaction.atomic():
        endpoint = Endpoint.objects.select_for_update().select_related("team").get(
            pk=endpoint_id)
        if endpoint.state != E.CREATING or endpoint.operation_name:
            return
        labels = contract_labels.endpoint_labels(endpoint.pk, endpoint.team.slug)
        try:
            op = backend.create_endpoint(
                endpoint.vertex_endpoint_id, endpoint.name[:128], labels,
                EndpointAccess(dedicated=endpoint.access == Endpoint.Access.DEDICATED,
                               psc_project_allowlist=tuple(endpoint.psc_project_allowlist)))
        except (errors.InvalidJobSpec, errors.PermissionDenied) as exc:
            endpoint.transition(E.FAILED, error=str(exc))
            return
        endpoint.operation_name = op.name
        endpoint.save(update_fields=["operation_name"])
        outcomes.endpoint_op(endpoint, op, done_state=E.READY)


def request_delete(endpoint: Endpoint) -> None:
    """Undeploy everything, then delete the endpoint (the sweep finishes it)."""
    with transaction.atomic():
        endpoint = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
        if endpoint.state in (E.DELETING, E.DELETED):
            return
        if endpoint.state == E.CREATING and not endpoint.operation_name:
            endpoint.transition(E.DELETED)  # never reached Vertex
            return
        endpoint.transition(E.DELETING)
        # Deployed models are undeployed now; one still deploying is once it lands (sweep).
        for deployment in endpoint.deployments.select_for_update().filter(state=D.DEPLOYED):
            _start_undeploy(deployment)
        if not endpoint.deployments.filter(state__in=LIVE_DEPLOYMENTS).exists():
            enqueue(TASKS + "delete_endpoint", str(endpoint.pk))


def send_delete(endpoint_id: int) -> None:
    with transaction.atomic():
        endpoint = Endpoint.objects.select_for_update().get(pk=endpoint_id)
        if endpoint.state != E.DELETING or endpoint.operation_name:
            return
        if endpoint.deployments.filter(state__in=LIVE_DEPLOYMENTS).exists():
            return  # the sweep sends the delete once the last undeploy has finished
        op = get_serving_backend().delete_endpoint(endpoint.vertex_name or
                                                   get_serving_backend().endpoint_name(
                                                       endpoint.vertex_endpoint_id))
        endpoint.operation_name = op.name
        endpoint.save(update_fields=["operation_name"])
        outcomes.endpoint_op(endpoint, op, done_state=E.DELETED)


# -- deployments --------------------------------------------------------------------------------

def check_resources(machine_type: str, accelerator_type: str, accelerator_count: int,
                    min_replicas: int, max_replicas: int, metric: str, target: int) -> None:
    """Vertex's rules for DedicatedResources, checked before anything is sent."""
    if get_machine_type(machine_type) is None:
        raise ServingError(f"unknown machine type {machine_type!r}")
    if accelerator_type:
        allowed = allowed_accelerators(machine_type)
        if accelerator_type not in allowed:
            offers = ", ".join(sorted(allowed)) or "none"
            raise ServingError(f"{machine_type} takes no {accelerator_type} (it takes: {offers})")
        if accelerator_count not in allowed[accelerator_type]:
            raise ServingError(f"{machine_type} takes {accelerator_type} in counts of "
                               f"{', '.join(map(str, allowed[accelerator_type]))}")
    elif accelerator_count:
        raise ServingError("accelerator_count needs an accelerator_type")
    if min_replicas < 1:
        raise ServingError("min_replicas must be at least 1")
    if max_replicas < min_replicas:
        raise ServingError("max_replicas must not be less than min_replicas")
    if metric == Deployment.Metric.ACCELERATOR and not accelerator_type:
        raise ServingError("autoscaling on accelerator duty cycle needs an accelerator")
    if metric and not 1 <= target <= 100:
        raise ServingError("autoscaling_target must be a percentage from 1 to 100")
    if not metric and target:
        raise ServingError("autoscaling_target needs an autoscaling_metric")


def deploy(*, endpoint: Endpoint, entry: ModelEntry, user: Any, **resources: Any) -> Deployment:
    if endpoint.state != E.READY:
        raise ServingError(f"the endpoint is {endpoint.state}, not READY")
    if entry.state != ModelEntry.State.READY:
        raise ServingError(f"model {entry.display_name} is {entry.state}, not READY")
    if entry.team_id != endpoint.team_id:
        raise ServingError("the model and the endpoint belong to different teams")
    try:
        images.require_usable(entry.image_uri, entry.team)
    except images.ImageRefused as exc:
        raise ServingError(f"model {entry.display_name}: {exc}", field=exc.field) from exc
    if refusal := deploy_refusal(entry, resources.get("accelerator_type", "")):
        raise ServingError(refusal, field="accelerator_type")
    resources.setdefault("max_replicas", resources.get("min_replicas", 1))
    check_resources(
        resources.get("machine_type", ""), resources.get("accelerator_type", ""),
        resources.get("accelerator_count", 0), resources.get("min_replicas", 1),
        resources["max_replicas"], resources.get("autoscaling_metric", ""),
        resources.get("autoscaling_target", 0),
    )
    # A TPU machine is Vertex's to accept, but no serving runtime runs on one (hardware.py).
    if refusal := hardware.machine_refusal(resources.get("machine_type", "")):
        raise ServingError(refusal, field="machine_type")
    # A vllm model: as many GPUs as its tensor parallel size, and GPUs it fits.
    if vllm := vllm_runtime.deploy_refusal(entry, resources.get("machine_type", ""),
                                           resources.get("accelerator_type", ""),
                                           resources.get("accelerator_count", 0)):
        raise ServingError(str(vllm), field=vllm.field)
    with transaction.atomic():
        deployment = Deployment.objects.create(endpoint=endpoint, model_entry=entry,
                                               created_by=user, **resources)
        enqueue(TASKS + "deploy", str(deployment.pk))
    return deployment


def _spec(deployment: Deployment) -> DeploySpec:
    entry = deployment.model_entry
    return DeploySpec(
        deployed_model_id=deployment.deployed_model_id,
        model_name=entry.vertex_name,
        display_name=entry.display_name[:128],
        machine_type=deployment.machine_type,
        accelerator_type=deployment.accelerator_type,
        accelerator_count=deployment.accelerator_count,
        min_replicas=deployment.min_replicas,
        max_replicas=deployment.max_replicas,
        autoscaling_metric=deployment.autoscaling_metric,
        autoscaling_target=deployment.autoscaling_target,
    )


def send_deploy(deployment_id: int) -> None:
    backend = get_serving_backend()
    with transaction.atomic():
        deployment = Deployment.objects.select_for_update().select_related(
            "endpoint", "model_entry").get(pk=deployment_id)
        if deployment.state != D.DEPLOYING or deployment.operation_name:
            return
        endpoint = deployment.endpoint
        remote = backend.get_endpoint(endpoint.vertex_name)
        if there := remote.deployed(deployment.deployed_model_id):
            outcomes.deployed(deployment, there.available_replicas)
            return  # an earlier try deployed it
        split = traffic.with_new_model(remote.traffic_split, deployment.traffic_percent)
        try:
            op = backend.deploy_model(endpoint.vertex_name, _spec(deployment), split)
        except (errors.InvalidJobSpec, errors.PermissionDenied, errors.FailedPrecondition,
                errors.NotFound) as exc:
            outcomes.deployment_failed(deployment, str(exc))
            return
        deployment.operation_name = op.name
        deployment.save(update_fields=["operation_name"])
        if op.done:
            outcomes.deployment_op_done(deployment, op)


def request_undeploy(deployment: Deployment) -> None:
    with transaction.atomic():
        deployment = Deployment.objects.select_for_update().get(pk=deployment.pk)
        if deployment.state == D.DEPLOYING:
            raise ServingError("the model is still being deployed: undeploy it once it is")
        if deployment.state != D.DEPLOYED:
            raise ServingError(f"the deployment is already {deployment.state}")
        _start_undeploy(deployment)


def _start_undeploy(deployment: Deployment) -> None:
    if deployment.transition(D.UNDEPLOYING):
        enqueue(TASKS + "undeploy", str(deployment.pk))


def send_undeploy(deployment_id: int) -> None:
    backend = get_serving_backend()
    with transaction.atomic():
        deployment = Deployment.objects.select_for_update().select_related("endpoint").get(
            pk=deployment_id)
        if deployment.state != D.UNDEPLOYING or deployment.operation_name:
            return
        endpoint = deployment.endpoint
        remote = backend.get_endpoint(endpoint.vertex_name)
        if remote.deployed(deployment.deployed_model_id) is None:
            outcomes.undeployed(deployment)  # gone already: an earlier try undeployed it
            return
        others = [d.id for d in remote.deployed_models if d.id != deployment.deployed_model_id]
        split = traffic.without_model(remote.traffic_split, deployment.deployed_model_id, others)
        op = backend.undeploy_model(endpoint.vertex_name, deployment.deployed_model_id, split)
        deployment.operation_name = op.name
        deployment.save(update_fields=["operation_name"])
        if op.done and not op.failed:
            outcomes.undeployed(deployment)


def set_autoscaling(deployment: Deployment, *, min_replicas: int, max_replicas: int,
                    autoscaling_metric: str, autoscaling_target: int) -> None:
    """Change a deployed model's replica range and autoscaling (MutateDeployedModel)."""
    if deployment.state != D.DEPLOYED:
        raise ServingError(f"the deployment is {deployment.state}, not DEPLOYED")
    check_resources(deployment.machine_type, deployment.accelerator_type,
                    deployment.accelerator_count, min_replicas, max_replicas,
                    autoscaling_metric, autoscaling_target)
    with transaction.atomic():
        Deployment.objects.filter(pk=deployment.pk).update(
            min_replicas=min_replicas, max_replicas=max_replicas,
            autoscaling_metric=autoscaling_metric, autoscaling_target=autoscaling_target,
            scaling_operation_name="", error_message="")
        enqueue(TASKS + "mutate", str(deployment.pk))


def send_mutate(deployment_id: int) -> None:
    with transaction.atomic():
        deployment = Deployment.objects.select_for_update().select_related(
            "endpoint", "model_entry").get(pk=deployment_id)
        if deployment.state != D.DEPLOYED or deployment.scaling_operation_name:
            return
        op = get_serving_backend().set_autoscaling(deployment.endpoint.vertex_name,
                                                   _spec(deployment))
        deployment.scaling_operation_name = "" if op.done else op.name
        if op.failed:
            deployment.error_message = op.error_message
        deployment.save(update_fields=["scaling_operation_name", "error_message"])


# -- the sweep ----------------------------------------------------------------------------------

def reconcile_all() -> None:
    """Follow every operation in flight and refresh deployed models' replica counts."""
    for entry in ModelEntry.objects.filter(state=ModelEntry.State.PACKAGING):
        _safely(packaging.reconcile, entry)
    for entry in ModelEntry.objects.filter(state=ModelEntry.State.UPLOADING):
        _safely(registry.reconcile, entry)
    for endpoint in Endpoint.objects.filter(state__in=(E.CREATING, E.DELETING)):
        _safely(_reconcile_endpoint, endpoint)
    for endpoint in Endpoint.objects.filter(
            state__in=(E.READY, E.DELETING), deployments__state__in=LIVE_DEPLOYMENTS).distinct():
        _safely(_reconcile_deployments, endpoint)


def _safely(fn: Any, obj: Any) -> None:
    try:
        fn(obj)
    except errors.TransientBackendError as exc:
        logger.warning("serving sweep: %s %s: %s", type(obj).__name__, obj.pk, exc)


def _reconcile_endpoint(endpoint: Endpoint) -> None:
    if not endpoint.operation_name:
        # The task that sends it was lost, or has not run yet: queue it again.
        task = "create_endpoint" if endpoint.state == E.CREATING else "delete_endpoint"
        send_now(TASKS + task, str(endpoint.pk))
        return
    op = outcomes.op(endpoint.operation_name)
    with transaction.atomic():
        endpoint = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
        if endpoint.state == E.CREATING:
            outcomes.endpoint_op(endpoint, op, done_state=E.READY)
        elif endpoint.state == E.DELETING:
            outcomes.endpoint_op(endpoint, op, done_state=E.DELETED)


def _reconcile_deployments(endpoint: Endpoint) -> None:
    remote = get_serving_backend().get_endpoint(endpoint.vertex_name)
    for deployment in endpoint.deployments.filter(state__in=LIVE_DEPLOYMENTS):
        there = remote.deployed(deployment.deployed_model_id)
        if deployment.state == D.DEPLOYING:
            if there is None and not deployment.operation_name:
                send_now(TASKS + "deploy", str(deployment.pk))  # its task was lost: send it again
                continue
            op = None if there is not None else outcomes.op(deployment.operation_name)
            if op is not None and not op.done:
                continue
            with transaction.atomic():
                locked = Deployment.objects.select_for_update().select_related(
                    "endpoint").get(pk=deployment.pk)
                if locked.state != D.DEPLOYING:
                    continue
                if op is None:
                    outcomes.deployed(locked, there.available_replicas)
                else:
                    outcomes.deployment_op_done(locked, op)
                if locked.state == D.DEPLOYED and locked.endpoint.state == E.DELETING:
                    _start_undeploy(locked)  # landed after its endpoint's delete was asked
        elif deployment.state == D.UNDEPLOYING:
            if there is None:
                with transaction.atomic():
                    locked = Deployment.objects.select_for_update().select_related(
                        "endpoint").get(pk=deployment.pk)
                    if locked.state == D.UNDEPLOYING:
                        outcomes.undeployed(locked)
            elif not deployment.operation_name or outcomes.op(deployment.operation_name).failed:
                # Lost, or refused (a traffic split that changed meanwhile): compute it anew.
                Deployment.objects.filter(pk=deployment.pk).update(operation_name="")
                send_now(TASKS + "undeploy", str(deployment.pk))
        else:  # DEPLOYED
            _refresh(deployment, there, remote.traffic_split.get(deployment.deployed_model_id, 0))


def _refresh(deployment: Deployment, there: Any, share: int) -> None:
    """A deployed model as the endpoint has it: its replicas, and its share of the traffic,
    which each later deploy or undeploy on the endpoint changes (what was asked at deploy time
    was only the share it started with)."""
    if there is None:
        # Not locked: the transition's conditional update loses to a worker that moved it on.
        deployment.transition(
            D.UNDEPLOYED, error="no longer on the endpoint (undeployed outside this product)")
        return
    updates: dict[str, Any] = {"available_replicas": there.available_replicas,
                               "traffic_percent": share}
    if deployment.scaling_operation_name:
        op = outcomes.op(deployment.scaling_operation_name)
        if op.done:
            updates["scaling_operation_name"] = ""
            updates["error_message"] = op.error_message if op.failed else ""
    Deployment.objects.filter(pk=deployment.pk).update(**updates)
