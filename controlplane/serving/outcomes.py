"""What an operation's or a deployment's outcome changes: the state moves the serving
lifecycle and its sweep share (lifecycle.py), each through the model's one transition method."""

from __future__ import annotations

from controlplane.backends import errors
from controlplane.backends.serving_base import Operation, get_serving_backend
from controlplane.core.queue import enqueue
from controlplane.serving.models import Deployment, Endpoint

# Queued by name (controlplane/core/queue.py): services never import a tasks module.
TASKS = "controlplane.serving.tasks."
D = Deployment.State
E = Endpoint.State
LIVE_DEPLOYMENTS = (D.DEPLOYING, D.DEPLOYED, D.UNDEPLOYING)


def endpoint_op(endpoint: Endpoint, op: Operation, *, done_state: str) -> None:
    if not op.done:
        return
    if op.failed and done_state == E.READY:
        endpoint.transition(E.FAILED, error=op.error_message)
    elif op.failed:  # a refused delete: the endpoint stays DELETING, with the reason
        endpoint.error_message = op.error_message
        endpoint.save(update_fields=["error_message"])
    elif done_state == E.READY:
        backend = get_serving_backend()
        name = backend.endpoint_name(endpoint.vertex_endpoint_id)
        dns = attachment = ""
        if endpoint.access != Endpoint.Access.PUBLIC:
            # Vertex names a dedicated endpoint's DNS and a private one's service attachment
            # once it exists: what its clients connect to.
            try:
                remote = backend.get_endpoint(name)
                dns, attachment = remote.dedicated_dns, remote.service_attachment
            except errors.BackendError:
                pass  # shown as unknown; the endpoint itself is ready
        endpoint.transition(E.READY, vertex_name=name, dedicated_dns=dns,
                            service_attachment=attachment)
    else:
        endpoint.transition(done_state)


def op(name: str) -> Operation:
    if "/operations/" not in name:
        return Operation(name=name, done=True)  # found done by an earlier try
    return get_serving_backend().get_operation(name)


def deployment_op_done(deployment: Deployment, op: Operation) -> None:
    if op.failed:
        deployment_failed(deployment, op.error_message)
    else:
        deployed(deployment, deployment.min_replicas)


def deployed(deployment: Deployment, available: int) -> None:
    deployment.transition(D.DEPLOYED, available_replicas=available)


def deployment_failed(deployment: Deployment, message: str) -> None:
    deployment.transition(D.FAILED, error=message)


def undeployed(deployment: Deployment) -> None:
    if not deployment.transition(D.UNDEPLOYED):
        return
    endpoint = deployment.endpoint
    if endpoint.state == E.DELETING and not endpoint.deployments.filter(
            state__in=LIVE_DEPLOYMENTS).exclude(pk=deployment.pk).exists():
        enqueue(TASKS + "delete_endpoint", str(endpoint.pk))
