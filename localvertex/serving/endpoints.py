"""google.cloud.aiplatform.v1.EndpointService: CreateEndpoint (done at once), GetEndpoint,
ListEndpoints, DeleteEndpoint, DeployModel, UndeployModel and MutateDeployedModel (operations
that finish when the replicas are ready or stopped; see core/operations.py). Vertex's checks that a
local run depends on are made here (and in checks.py) and answered with the same status
codes. The ModelService is in models.py.
"""

from __future__ import annotations

import grpc
from google.protobuf import empty_pb2

from localvertex.core.errors import ApiError, failed_precondition, invalid, not_found
from localvertex.core.operations import Operations
from localvertex.core.resources import check_parent, location_of, matches, now, page
from localvertex.core.store import Conflict, Store
from localvertex.serving.checks import (
    DEPLOYED_ID,
    ENDPOINT_ID,
    ENDPOINT_NAME,
    check_resources,
    check_split,
)
from localvertex.serving.deployments import Deployments, spec_for
from localvertex.serving.messages import (
    CreateEndpointOperationMetadata,
    CreateEndpointRequest,
    DeleteEndpointRequest,
    DeleteOperationMetadata,
    DeployedModelPb,
    DeployModelOperationMetadata,
    DeployModelRequest,
    DeployModelResponse,
    GetEndpointRequest,
    ListEndpointsRequest,
    ListEndpointsResponse,
    MutateDeployedModelOperationMetadata,
    MutateDeployedModelRequest,
    MutateDeployedModelResponse,
    UndeployModelOperationMetadata,
    UndeployModelRequest,
    UndeployModelResponse,
)
from localvertex.serving.model_servers import DeployError
from localvertex.serving.models import ModelService
from localvertex.serving.store import EndpointPb, ModelPb

ENDPOINT_SERVICE = "google.cloud.aiplatform.v1.EndpointService"

_DEPLOY_TIMEOUT_S = 300.0
_UPDATABLE = {
    "dedicated_resources.min_replica_count",
    "dedicated_resources.max_replica_count",
    "dedicated_resources.autoscaling_metric_specs",
    "dedicated_resources",
}


class EndpointService:
    def __init__(
        self,
        store: Store,
        operations: Operations,
        deployments: Deployments,
        models: ModelService,
        dedicated_dns: str = "",
    ) -> None:
        self.store = store
        self.operations = operations
        self.deployments = deployments
        self.models = models
        # A dedicated endpoint's dedicated_endpoint_dns: the emulator's HTTPS listener
        # (rest.py), where Google's SDK sends raw_predict; "" gives Vertex's DNS name's form.
        self.dedicated_dns = dedicated_dns
        # Deployed model ids whose deployment is under way, per endpoint.
        self._deploying: set[tuple[str, str]] = set()

    # -- reading -------------------------------------------------------------------------------

    def load(self, name: str) -> EndpointPb:  # type: ignore[valid-type]
        m = ENDPOINT_NAME.match(name)
        if not m:
            raise invalid(f"name {name!r} is not projects/P/locations/L/endpoints/ID.")
        endpoint = self.store.get(name)
        if endpoint is None:
            raise not_found(f'Endpoint "{name}" not found.')
        return endpoint

    def _with_status(self, endpoint: EndpointPb) -> EndpointPb:  # type: ignore[valid-type]
        """DeployedModel.status from the running replicas, as Vertex reports it."""
        for deployed in endpoint.deployed_models:
            replicas = self.deployments.get(endpoint.name, deployed.id)
            deployed.status.available_replica_count = replicas.available() if replicas else 0
            deployed.status.last_update_time.CopyFrom(now())
        if endpoint.dedicated_endpoint_enabled and self.dedicated_dns:
            # The listener's port as it is now (0 picks another at each start).
            endpoint.dedicated_endpoint_dns = self.dedicated_dns
        return endpoint

    def get_endpoint(self, request, context: grpc.ServicerContext):
        return self._with_status(self.load(request.name))

    def list_endpoints(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        endpoints = [
            self._with_status(e)
            for e in self.store.select("parent = ?", (parent,))
            if matches(e.labels, request.filter)
        ]
        chunk, token = page(endpoints, request.page_size, request.page_token)
        return ListEndpointsResponse(endpoints=chunk, next_page_token=token)

    # -- creating and deleting -------------------------------------------------------------------

    def create_endpoint(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        endpoint = EndpointPb()
        endpoint.CopyFrom(request.endpoint)
        if not endpoint.display_name:
            raise invalid("endpoint.display_name is required.")
        if endpoint.deployed_models:
            raise invalid("endpoint.deployed_models is output only: use DeployModel.")
        endpoint_id = request.endpoint_id or self.store.new_id()[-9:].lstrip("0") or "1"
        if not ENDPOINT_ID.match(endpoint_id):
            raise invalid(
                f"endpoint_id {endpoint_id!r}: up to 63 of [a-z0-9-] starting with a letter, "
                "or up to 9 digits."
            )
        endpoint.name = f"{parent}/endpoints/{endpoint_id}"
        _set_access(endpoint, parent, endpoint_id, self.dedicated_dns)
        endpoint.ClearField("traffic_split")
        endpoint.create_time.CopyFrom(now())
        endpoint.update_time.CopyFrom(now())
        endpoint.etag = self.store.new_id()
        try:
            self.store.insert(endpoint)
        except Conflict as exc:
            raise ApiError(grpc.StatusCode.ALREADY_EXISTS,
                           f"Endpoint {endpoint.name} already exists.") from exc
        return self.operations.done(parent, CreateEndpointOperationMetadata(), endpoint)

    def delete_endpoint(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.name)
        busy = [k for k in self._deploying if k[0] == endpoint.name]
        if endpoint.deployed_models or busy:
            raise failed_precondition(
                f"Endpoint {endpoint.name} has deployed models: undeploy them first."
            )
        self.store.delete(endpoint.name)
        return self.operations.done(
            location_of(endpoint.name), DeleteOperationMetadata(), empty_pb2.Empty()
        )

    # -- deploying -------------------------------------------------------------------------------

    def deploy_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        deployed, model = self._new_deployed_model(endpoint, request.deployed_model)
        split = dict(request.traffic_split)
        if split:
            # Key "0" stands for the model being deployed, whose id is not known beforehand.
            split = {(deployed.id if k == "0" else k): v for k, v in split.items()}
            check_split(split, {d.id for d in endpoint.deployed_models} | {deployed.id})
        key = (endpoint.name, deployed.id)
        self._deploying.add(key)
        project = endpoint.name.split("/")[1]
        spec = spec_for(project, endpoint.name, deployed, model)
        timeout = _deployment_timeout(model)

        def work() -> DeployModelResponse:
            try:
                self._start_replicas(endpoint.name, deployed, spec, timeout)
                self._add_deployed_model(endpoint.name, deployed, split)
                return DeployModelResponse(deployed_model=deployed)
            finally:
                self._deploying.discard(key)

        return self.operations.run(
            location_of(endpoint.name), DeployModelOperationMetadata(), work,
            f"deploy-{deployed.id}",
        )

    def _new_deployed_model(
        self, endpoint, requested
    ) -> tuple[object, ModelPb]:  # type: ignore[valid-type]
        """The DeployedModel to add to `endpoint`, checked and filled in as Vertex does, and
        the Model it serves."""
        deployed = DeployedModelPb()
        deployed.CopyFrom(requested)
        model = self.models.load(deployed.model)
        # The SDK names the model with its version (models/ID@1); Vertex answers the model's
        # name and the version apart, in model_version_id.
        deployed.model = model.name
        deployed.model_version_id = model.version_id
        check_resources(deployed)
        if deployed.id and not DEPLOYED_ID.match(deployed.id):
            raise invalid("deployed_model.id must be 1 to 10 digits.")
        deployed.id = deployed.id or self.store.new_id()[-10:].lstrip("0") or "1"
        if (endpoint.name, deployed.id) in self._deploying or any(
            d.id == deployed.id for d in endpoint.deployed_models
        ):
            raise ApiError(grpc.StatusCode.ALREADY_EXISTS,
                           f"DeployedModel {deployed.id} already exists on {endpoint.name}.")
        resources = deployed.dedicated_resources
        if resources.max_replica_count == 0:
            resources.max_replica_count = resources.min_replica_count
        deployed.ClearField("status")
        deployed.create_time.CopyFrom(now())
        if not deployed.display_name:
            deployed.display_name = model.display_name
        return deployed, model

    def _start_replicas(self, endpoint_name: str, deployed, spec, timeout: float) -> None:
        """Start the deployed model's min_replica_count replicas and wait until they are ready;
        FAILED_PRECONDITION (and nothing left running) if they are not within `timeout`."""
        replicas = self.deployments.start(
            endpoint_name, spec, deployed.dedicated_resources.min_replica_count
        )
        try:
            replicas.wait_ready(timeout)
        except DeployError as exc:
            self.deployments.stop(endpoint_name, deployed.id)
            raise failed_precondition(str(exc)) from exc

    def _add_deployed_model(self, endpoint_name: str, deployed, split: dict[str, int]) -> None:
        """Record the ready deployment on its endpoint, with the new traffic split if any."""

        def add(e) -> None:
            e.deployed_models.append(deployed)
            if split:
                e.traffic_split.clear()
                e.traffic_split.update({k: v for k, v in split.items() if v})
            e.update_time.CopyFrom(now())

        try:
            self.store.update(endpoint_name, add)
        except KeyError as exc:
            self.deployments.stop(endpoint_name, deployed.id)
            raise not_found(f"Endpoint {endpoint_name} was deleted.") from exc

    def undeploy_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        deployed_id = request.deployed_model_id
        split = dict(request.traffic_split)
        _check_undeploy(endpoint, deployed_id, split)

        def work() -> UndeployModelResponse:
            self.deployments.stop(endpoint.name, deployed_id)

            def remove(e) -> None:
                kept = [d for d in e.deployed_models if d.id != deployed_id]
                del e.deployed_models[:]
                e.deployed_models.extend(kept)
                new_split = split or {k: v for k, v in e.traffic_split.items() if k != deployed_id}
                e.traffic_split.clear()
                if kept:
                    e.traffic_split.update({k: v for k, v in new_split.items() if v})
                e.update_time.CopyFrom(now())

            self.store.update(endpoint.name, remove)
            return UndeployModelResponse()

        return self.operations.run(
            location_of(endpoint.name), UndeployModelOperationMetadata(), work,
            f"undeploy-{deployed_id}",
        )

    def mutate_deployed_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        wanted = request.deployed_model
        current = next((d for d in endpoint.deployed_models if d.id == wanted.id), None)
        if current is None:
            raise not_found(f"DeployedModel {wanted.id} not found on {endpoint.name}.")
        updated = _mutated(current, wanted, list(request.update_mask.paths))
        check_resources(updated)

        def work() -> MutateDeployedModelResponse:
            self._rescale(endpoint.name, updated)

            def replace(e) -> None:
                for d in e.deployed_models:
                    if d.id == updated.id:
                        d.dedicated_resources.CopyFrom(updated.dedicated_resources)
                e.update_time.CopyFrom(now())

            self.store.update(endpoint.name, replace)
            return MutateDeployedModelResponse(deployed_model=updated)

        return self.operations.run(
            location_of(endpoint.name), MutateDeployedModelOperationMetadata(),
            work, f"mutate-{updated.id}",
        )

    def _rescale(self, endpoint_name: str, updated) -> None:
        """Scale a running deployment to its new min_replica_count and wait until it is ready."""
        replicas = self.deployments.get(endpoint_name, updated.id)
        if replicas is None:
            return
        replicas.scale(updated.dedicated_resources.min_replica_count)
        try:
            replicas.wait_ready(_DEPLOY_TIMEOUT_S)
        except DeployError as exc:
            raise failed_precondition(str(exc)) from exc

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "CreateEndpoint": (self.create_endpoint, CreateEndpointRequest),
            "GetEndpoint": (self.get_endpoint, GetEndpointRequest),
            "ListEndpoints": (self.list_endpoints, ListEndpointsRequest),
            "DeleteEndpoint": (self.delete_endpoint, DeleteEndpointRequest),
            "DeployModel": (self.deploy_model, DeployModelRequest),
            "UndeployModel": (self.undeploy_model, UndeployModelRequest),
            "MutateDeployedModel": (self.mutate_deployed_model, MutateDeployedModelRequest),
        }


def _set_access(endpoint, parent: str, endpoint_id: str, dedicated_dns: str = "") -> None:
    """Where clients reach the endpoint, filled in as Vertex does at creation: a dedicated
    endpoint's own DNS name, a private one's PSC service attachment. The DNS name's form
    (<id>.<region>-<project number>.prediction.vertexai.goog) is the one Google's pages show;
    the emulator has no project number and puts the project id in its place. With
    DEDICATED_DNS (the emulator's HTTPS listener, host:port) that is what it says instead:
    Google's SDK sends a dedicated endpoint's REST calls there (rest.py)."""
    psc = endpoint.private_service_connect_config
    if endpoint.dedicated_endpoint_dns or psc.service_attachment:
        raise invalid("dedicated_endpoint_dns and service_attachment are output only.")
    if psc.enable_private_service_connect:
        if endpoint.network:
            raise invalid("An endpoint uses either network (VPC peering) or "
                          "private_service_connect_config, not both.")
        if not psc.project_allowlist:
            raise invalid("private_service_connect_config.project_allowlist names the "
                          "projects that may connect; it is empty.")
        if endpoint.dedicated_endpoint_enabled:
            raise invalid("A Private Service Connect endpoint is private already: "
                          "dedicated_endpoint_enabled is for public endpoints.")
    project, location = parent.split("/")[1], parent.split("/")[3]
    if endpoint.dedicated_endpoint_enabled:
        endpoint.dedicated_endpoint_dns = dedicated_dns or (
            f"{endpoint_id}.{location}-{project}.prediction.vertexai.goog")
    if psc.enable_private_service_connect:
        psc.service_attachment = (
            f"projects/{project}-tp/regions/{location}/serviceAttachments/sa-{endpoint_id}")


def _deployment_timeout(model) -> float:
    """How long a deployment may take to become ready: the model's container_spec
    deployment_timeout when set, else Vertex's default."""
    container = model.container_spec
    if container.HasField("deployment_timeout") and container.deployment_timeout.seconds:
        return float(container.deployment_timeout.seconds)
    return _DEPLOY_TIMEOUT_S


def _check_undeploy(endpoint, deployed_id: str, split: dict[str, int]) -> None:
    """The model must be deployed there, and no traffic may be left going to it."""
    ids = [d.id for d in endpoint.deployed_models]
    if deployed_id not in ids:
        raise not_found(f"DeployedModel {deployed_id} not found on {endpoint.name}.")
    remaining = set(ids) - {deployed_id}
    if split:
        check_split(split, set(ids))
        if split.get(deployed_id):
            raise failed_precondition(
                "traffic_split still sends traffic to the model being undeployed."
            )
    elif remaining and endpoint.traffic_split.get(deployed_id, 0) > 0:
        raise failed_precondition(
            f"DeployedModel {deployed_id} receives "
            f"{endpoint.traffic_split[deployed_id]}% of the traffic: pass a "
            "traffic_split that sends it to the other deployed models."
        )


def _mutated(current, wanted, paths: list[str]):
    """A copy of the `current` DeployedModel with the fields `paths` names taken from `wanted`."""
    if not paths:
        raise invalid("update_mask is required.")
    bad = [p for p in paths if p not in _UPDATABLE]
    if bad:
        raise invalid(f"update_mask: cannot update {bad}; updatable: "
                      f"{sorted(_UPDATABLE)}.")
    updated = DeployedModelPb()
    updated.CopyFrom(current)
    resources = updated.dedicated_resources
    new = wanted.dedicated_resources
    if "dedicated_resources" in paths:
        paths = sorted(_UPDATABLE - {"dedicated_resources"})
    if "dedicated_resources.min_replica_count" in paths:
        resources.min_replica_count = new.min_replica_count
    if "dedicated_resources.max_replica_count" in paths:
        resources.max_replica_count = new.max_replica_count or resources.min_replica_count
    if "dedicated_resources.autoscaling_metric_specs" in paths:
        del resources.autoscaling_metric_specs[:]
        resources.autoscaling_metric_specs.extend(new.autoscaling_metric_specs)
    return updated
