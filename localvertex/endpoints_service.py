"""google.cloud.aiplatform.v1.EndpointService and ModelService (the parts endpoints need).

ModelService: UploadModel (done at once), GetModel, ListModels, DeleteModel.
EndpointService: CreateEndpoint (done at once), GetEndpoint, ListEndpoints, DeleteEndpoint,
DeployModel, UndeployModel and MutateDeployedModel (operations that finish when the replicas
are ready or stopped; see operations.py). Vertex's checks that a local run depends on are made
here and answered with the same status codes.
"""

from __future__ import annotations

import re
import time

import grpc
from google.cloud import aiplatform_v1
from google.protobuf import empty_pb2

from localvertex import errors, timeutil
from localvertex.deployments import Deployments, spec_for
from localvertex.endpoint_runner import AUTOSCALING_METRICS, DeployError
from localvertex.endpointstore import Conflict, EndpointPb, ModelPb, ServingStore
from localvertex.operations import Operations

ENDPOINT_SERVICE = "google.cloud.aiplatform.v1.EndpointService"
MODEL_SERVICE = "google.cloud.aiplatform.v1.ModelService"

_pb = lambda t: t.pb()  # noqa: E731 - the protobuf class behind a proto-plus type
CreateEndpointRequest = _pb(aiplatform_v1.CreateEndpointRequest)
GetEndpointRequest = _pb(aiplatform_v1.GetEndpointRequest)
ListEndpointsRequest = _pb(aiplatform_v1.ListEndpointsRequest)
ListEndpointsResponse = _pb(aiplatform_v1.ListEndpointsResponse)
DeleteEndpointRequest = _pb(aiplatform_v1.DeleteEndpointRequest)
DeployModelRequest = _pb(aiplatform_v1.DeployModelRequest)
DeployModelResponse = _pb(aiplatform_v1.DeployModelResponse)
UndeployModelRequest = _pb(aiplatform_v1.UndeployModelRequest)
UndeployModelResponse = _pb(aiplatform_v1.UndeployModelResponse)
MutateDeployedModelRequest = _pb(aiplatform_v1.MutateDeployedModelRequest)
MutateDeployedModelResponse = _pb(aiplatform_v1.MutateDeployedModelResponse)
CreateEndpointOperationMetadata = _pb(aiplatform_v1.CreateEndpointOperationMetadata)
DeployModelOperationMetadata = _pb(aiplatform_v1.DeployModelOperationMetadata)
UndeployModelOperationMetadata = _pb(aiplatform_v1.UndeployModelOperationMetadata)
MutateDeployedModelOperationMetadata = _pb(aiplatform_v1.MutateDeployedModelOperationMetadata)
DeleteOperationMetadata = _pb(aiplatform_v1.DeleteOperationMetadata)
UploadModelRequest = _pb(aiplatform_v1.UploadModelRequest)
UploadModelResponse = _pb(aiplatform_v1.UploadModelResponse)
UploadModelOperationMetadata = _pb(aiplatform_v1.UploadModelOperationMetadata)
GetModelRequest = _pb(aiplatform_v1.GetModelRequest)
ListModelsRequest = _pb(aiplatform_v1.ListModelsRequest)
ListModelsResponse = _pb(aiplatform_v1.ListModelsResponse)
DeleteModelRequest = _pb(aiplatform_v1.DeleteModelRequest)
DeployedModelPb = _pb(aiplatform_v1.DeployedModel)

_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
_ENDPOINT = re.compile(r"^(projects/[^/]+/locations/[^/]+)/endpoints/([^/]+)$")
_MODEL = re.compile(r"^(projects/[^/]+/locations/[^/]+)/models/([^/@]+)(@[^/]+)?$")
# CreateEndpointRequest.endpoint_id: up to 63 of [a-z0-9-] starting with a letter, or up to
# 9 digits without a leading zero. UploadModelRequest.model_id: up to 63 of [a-z0-9_-], not
# starting with a digit or '-'. DeployedModel.id: 1-10 digits.
_ENDPOINT_ID = re.compile(r"^(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|[1-9][0-9]{0,8})$")
_MODEL_ID = re.compile(r"^[a-z_][a-z0-9_-]{0,62}$")
_DEPLOYED_ID = re.compile(r"^[0-9]{1,10}$")
_LABEL_FILTER = re.compile(r'^\s*labels\.([a-z0-9_-]+)\s*=\s*"([^"]*)"\s*$')
_DEPLOY_TIMEOUT_S = 300.0
_UPDATABLE = {
    "dedicated_resources.min_replica_count",
    "dedicated_resources.max_replica_count",
    "dedicated_resources.autoscaling_metric_specs",
    "dedicated_resources",
}


def _parent(parent: str) -> str:
    if not _PARENT.match(parent):
        raise errors.invalid(f"parent {parent!r} is not projects/PROJECT/locations/LOCATION.")
    return parent


def _now():
    return timeutil.to_timestamp(time.time_ns())


def _matches(labels, filter_: str) -> bool:
    """The filter subset the control plane uses: `labels.k="v"` terms joined by AND."""
    if not filter_.strip():
        return True
    for term in re.split(r"\s+AND\s+", filter_.strip()):
        m = _LABEL_FILTER.match(term)
        if not m:
            raise errors.invalid(f"Unsupported filter term {term!r}.")
        if labels.get(m.group(1)) != m.group(2):
            return False
    return True


def _page(items: list, page_size: int, page_token: str) -> tuple[list, str]:
    try:
        start = int(page_token) if page_token else 0
    except ValueError as exc:
        raise errors.invalid("Invalid page_token.") from exc
    size = page_size if page_size > 0 else 100
    chunk = items[start:start + size]
    more = start + size < len(items)
    return chunk, str(start + size) if more else ""


class ModelService:
    def __init__(self, store: ServingStore, operations: Operations) -> None:
        self.store = store
        self.operations = operations

    def load(self, name: str) -> ModelPb:  # type: ignore[valid-type]
        m = _MODEL.match(name)
        if not m:
            raise errors.invalid(f"name {name!r} is not projects/P/locations/L/models/ID.")
        model = self.store.get("model", f"{m.group(1)}/models/{m.group(2)}")
        if model is None:
            raise errors.not_found(f'Model "{name}" not found.')
        return model

    def upload_model(self, request, context: grpc.ServicerContext):
        parent = _parent(request.parent)
        model = ModelPb()
        model.CopyFrom(request.model)
        if not model.display_name:
            raise errors.invalid("model.display_name is required.")
        if not model.container_spec.image_uri:
            raise errors.invalid("model.container_spec.image_uri is required.")
        if not model.container_spec.command and not model.container_spec.args:
            raise errors.invalid(
                "model.container_spec.command is required by the local emulator, which cannot"
                " run an image's entrypoint."
            )
        if model.artifact_uri and not model.artifact_uri.startswith("gs://"):
            raise errors.invalid("model.artifact_uri must be a gs:// URI.")
        model_id = request.model_id or self.store.new_id()
        if not (_MODEL_ID.match(model_id) or model_id.isdigit()):
            raise errors.invalid(f"model_id {model_id!r}: up to 63 of [a-z0-9_-], not starting"
                                 " with a digit or '-'.")
        model.name = f"{parent}/models/{model_id}"
        model.version_id = "1"
        model.create_time.CopyFrom(_now())
        model.update_time.CopyFrom(_now())
        model.version_create_time.CopyFrom(_now())
        try:
            self.store.insert("model", model.name, parent, model)
        except Conflict as exc:
            raise errors.ApiError(grpc.StatusCode.ALREADY_EXISTS,
                                  f"Model {model.name} already exists.") from exc
        return self.operations.done(
            parent, UploadModelOperationMetadata(),
            UploadModelResponse(model=model.name, model_version_id="1"),
        )

    def get_model(self, request, context: grpc.ServicerContext):
        return self.load(request.name)

    def list_models(self, request, context: grpc.ServicerContext):
        parent = _parent(request.parent)
        models = [m for m in self.store.list("model", parent) if _matches(m.labels, request.filter)]
        chunk, token = _page(models, request.page_size, request.page_token)
        return ListModelsResponse(models=chunk, next_page_token=token)

    def delete_model(self, request, context: grpc.ServicerContext):
        model = self.load(request.name)
        for endpoint in self.store.list("endpoint"):
            if any(d.model == model.name for d in endpoint.deployed_models):
                raise errors.failed_precondition(
                    f"Model {model.name} is deployed to {endpoint.name}: undeploy it first."
                )
        self.store.delete("model", model.name)
        parent = model.name.rsplit("/models/", 1)[0]
        return self.operations.done(parent, DeleteOperationMetadata(), empty_pb2.Empty())

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "UploadModel": (self.upload_model, UploadModelRequest),
            "GetModel": (self.get_model, GetModelRequest),
            "ListModels": (self.list_models, ListModelsRequest),
            "DeleteModel": (self.delete_model, DeleteModelRequest),
        }


class EndpointService:
    def __init__(
        self,
        store: ServingStore,
        operations: Operations,
        deployments: Deployments,
        models: ModelService,
    ) -> None:
        self.store = store
        self.operations = operations
        self.deployments = deployments
        self.models = models
        # Deployed model ids whose deployment is under way, per endpoint.
        self._deploying: set[tuple[str, str]] = set()

    # -- reading -------------------------------------------------------------------------------

    def load(self, name: str) -> EndpointPb:  # type: ignore[valid-type]
        m = _ENDPOINT.match(name)
        if not m:
            raise errors.invalid(f"name {name!r} is not projects/P/locations/L/endpoints/ID.")
        endpoint = self.store.get("endpoint", name)
        if endpoint is None:
            raise errors.not_found(f'Endpoint "{name}" not found.')
        return endpoint

    def _with_status(self, endpoint: EndpointPb) -> EndpointPb:  # type: ignore[valid-type]
        """DeployedModel.status from the running replicas, as Vertex reports it."""
        for deployed in endpoint.deployed_models:
            replicas = self.deployments.get(endpoint.name, deployed.id)
            deployed.status.available_replica_count = replicas.available() if replicas else 0
            deployed.status.last_update_time.CopyFrom(_now())
        return endpoint

    def get_endpoint(self, request, context: grpc.ServicerContext):
        return self._with_status(self.load(request.name))

    def list_endpoints(self, request, context: grpc.ServicerContext):
        parent = _parent(request.parent)
        endpoints = [
            self._with_status(e)
            for e in self.store.list("endpoint", parent)
            if _matches(e.labels, request.filter)
        ]
        chunk, token = _page(endpoints, request.page_size, request.page_token)
        return ListEndpointsResponse(endpoints=chunk, next_page_token=token)

    # -- creating and deleting -------------------------------------------------------------------

    def create_endpoint(self, request, context: grpc.ServicerContext):
        parent = _parent(request.parent)
        endpoint = EndpointPb()
        endpoint.CopyFrom(request.endpoint)
        if not endpoint.display_name:
            raise errors.invalid("endpoint.display_name is required.")
        if endpoint.deployed_models:
            raise errors.invalid("endpoint.deployed_models is output only: use DeployModel.")
        endpoint_id = request.endpoint_id or self.store.new_id()[-9:].lstrip("0") or "1"
        if not _ENDPOINT_ID.match(endpoint_id):
            raise errors.invalid(
                f"endpoint_id {endpoint_id!r}: up to 63 of [a-z0-9-] starting with a letter, "
                "or up to 9 digits."
            )
        endpoint.name = f"{parent}/endpoints/{endpoint_id}"
        endpoint.ClearField("traffic_split")
        endpoint.create_time.CopyFrom(_now())
        endpoint.update_time.CopyFrom(_now())
        endpoint.etag = self.store.new_id()
        try:
            self.store.insert("endpoint", endpoint.name, parent, endpoint)
        except Conflict as exc:
            raise errors.ApiError(grpc.StatusCode.ALREADY_EXISTS,
                                  f"Endpoint {endpoint.name} already exists.") from exc
        return self.operations.done(parent, CreateEndpointOperationMetadata(), endpoint)

    def delete_endpoint(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.name)
        busy = [k for k in self._deploying if k[0] == endpoint.name]
        if endpoint.deployed_models or busy:
            raise errors.failed_precondition(
                f"Endpoint {endpoint.name} has deployed models: undeploy them first."
            )
        self.store.delete("endpoint", endpoint.name)
        parent = endpoint.name.rsplit("/endpoints/", 1)[0]
        return self.operations.done(parent, DeleteOperationMetadata(), empty_pb2.Empty())

    # -- deploying -------------------------------------------------------------------------------

    def deploy_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        deployed = DeployedModelPb()
        deployed.CopyFrom(request.deployed_model)
        model = self.models.load(deployed.model)
        deployed.model = model.name
        _check_resources(deployed)
        if deployed.id and not _DEPLOYED_ID.match(deployed.id):
            raise errors.invalid("deployed_model.id must be 1 to 10 digits.")
        deployed.id = deployed.id or self.store.new_id()[-10:].lstrip("0") or "1"
        key = (endpoint.name, deployed.id)
        if key in self._deploying or any(d.id == deployed.id for d in endpoint.deployed_models):
            raise errors.ApiError(grpc.StatusCode.ALREADY_EXISTS,
                                  f"DeployedModel {deployed.id} already exists on {endpoint.name}.")
        split = dict(request.traffic_split)
        if split:
            split = {(deployed.id if k == "0" else k): v for k, v in split.items()}
            _check_split(split, {d.id for d in endpoint.deployed_models} | {deployed.id})
        resources = deployed.dedicated_resources
        if resources.max_replica_count == 0:
            resources.max_replica_count = resources.min_replica_count
        deployed.ClearField("status")
        deployed.create_time.CopyFrom(_now())
        if not deployed.display_name:
            deployed.display_name = model.display_name
        self._deploying.add(key)
        project = endpoint.name.split("/")[1]
        spec = spec_for(project, endpoint.name, deployed, model)
        timeout = _DEPLOY_TIMEOUT_S
        container = model.container_spec
        if container.HasField("deployment_timeout") and container.deployment_timeout.seconds:
            timeout = float(container.deployment_timeout.seconds)

        def work() -> DeployModelResponse:
            try:
                replicas = self.deployments.start(endpoint.name, spec, resources.min_replica_count)
                try:
                    replicas.wait_ready(timeout)
                except DeployError as exc:
                    self.deployments.stop(endpoint.name, deployed.id)
                    raise errors.failed_precondition(str(exc)) from exc

                def add(e) -> None:
                    e.deployed_models.append(deployed)
                    if split:
                        e.traffic_split.clear()
                        e.traffic_split.update({k: v for k, v in split.items() if v})
                    e.update_time.CopyFrom(_now())

                try:
                    self.store.update("endpoint", endpoint.name, add)
                except KeyError as exc:
                    self.deployments.stop(endpoint.name, deployed.id)
                    raise errors.not_found(f"Endpoint {endpoint.name} was deleted.") from exc
                return DeployModelResponse(deployed_model=deployed)
            finally:
                self._deploying.discard(key)

        return self.operations.run(
            endpoint.name.rsplit("/endpoints/", 1)[0], DeployModelOperationMetadata(), work,
            f"deploy-{deployed.id}",
        )

    def undeploy_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        ids = [d.id for d in endpoint.deployed_models]
        if request.deployed_model_id not in ids:
            raise errors.not_found(
                f"DeployedModel {request.deployed_model_id} not found on {endpoint.name}."
            )
        remaining = set(ids) - {request.deployed_model_id}
        split = dict(request.traffic_split)
        if split:
            _check_split(split, set(ids))
            if split.get(request.deployed_model_id):
                raise errors.failed_precondition(
                    "traffic_split still sends traffic to the model being undeployed."
                )
        elif remaining and endpoint.traffic_split.get(request.deployed_model_id, 0) > 0:
            raise errors.failed_precondition(
                f"DeployedModel {request.deployed_model_id} receives "
                f"{endpoint.traffic_split[request.deployed_model_id]}% of the traffic: pass a "
                "traffic_split that sends it to the other deployed models."
            )

        def work() -> UndeployModelResponse:
            self.deployments.stop(endpoint.name, request.deployed_model_id)

            def remove(e) -> None:
                kept = [d for d in e.deployed_models if d.id != request.deployed_model_id]
                del e.deployed_models[:]
                e.deployed_models.extend(kept)
                new_split = split or {
                    k: v for k, v in e.traffic_split.items() if k != request.deployed_model_id
                }
                e.traffic_split.clear()
                if kept:
                    e.traffic_split.update({k: v for k, v in new_split.items() if v})
                e.update_time.CopyFrom(_now())

            self.store.update("endpoint", endpoint.name, remove)
            return UndeployModelResponse()

        return self.operations.run(
            endpoint.name.rsplit("/endpoints/", 1)[0], UndeployModelOperationMetadata(), work,
            f"undeploy-{request.deployed_model_id}",
        )

    def mutate_deployed_model(self, request, context: grpc.ServicerContext):
        endpoint = self.load(request.endpoint)
        wanted = request.deployed_model
        current = next((d for d in endpoint.deployed_models if d.id == wanted.id), None)
        if current is None:
            raise errors.not_found(f"DeployedModel {wanted.id} not found on {endpoint.name}.")
        paths = list(request.update_mask.paths)
        if not paths:
            raise errors.invalid("update_mask is required.")
        bad = [p for p in paths if p not in _UPDATABLE]
        if bad:
            raise errors.invalid(f"update_mask: cannot update {bad}; updatable: "
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
        _check_resources(updated)

        def work() -> MutateDeployedModelResponse:
            replicas = self.deployments.get(endpoint.name, updated.id)
            if replicas is not None:
                replicas.scale(resources.min_replica_count)
                try:
                    replicas.wait_ready(_DEPLOY_TIMEOUT_S)
                except DeployError as exc:
                    raise errors.failed_precondition(str(exc)) from exc

            def replace(e) -> None:
                for d in e.deployed_models:
                    if d.id == updated.id:
                        d.dedicated_resources.CopyFrom(updated.dedicated_resources)
                e.update_time.CopyFrom(_now())

            self.store.update("endpoint", endpoint.name, replace)
            return MutateDeployedModelResponse(deployed_model=updated)

        return self.operations.run(
            endpoint.name.rsplit("/endpoints/", 1)[0], MutateDeployedModelOperationMetadata(),
            work, f"mutate-{updated.id}",
        )

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


def _check_resources(deployed) -> None:
    """Custom-container models run on dedicated resources; check what Vertex checks."""
    if deployed.WhichOneof("prediction_resources") != "dedicated_resources":
        raise errors.invalid(
            "deployed_model.dedicated_resources is required: models with a custom container"
            " support only dedicated resources."
        )
    resources = deployed.dedicated_resources
    machine = resources.machine_spec
    if not machine.machine_type:
        raise errors.invalid("dedicated_resources.machine_spec.machine_type is required.")
    if machine.accelerator_type and machine.accelerator_count < 1:
        raise errors.invalid("machine_spec.accelerator_count must be at least 1 with an"
                             " accelerator_type.")
    if resources.min_replica_count < 1:
        raise errors.invalid("dedicated_resources.min_replica_count must be at least 1.")
    if resources.max_replica_count and resources.max_replica_count < resources.min_replica_count:
        raise errors.invalid("dedicated_resources.max_replica_count must not be less than"
                             " min_replica_count.")
    for spec in resources.autoscaling_metric_specs:
        if spec.metric_name not in AUTOSCALING_METRICS:
            raise errors.invalid(
                f"autoscaling_metric_specs: unsupported metric {spec.metric_name!r}; use one of "
                f"{sorted(AUTOSCALING_METRICS)}."
            )
        if spec.metric_name.endswith("duty_cycle") and not machine.accelerator_type:
            raise errors.invalid("the accelerator duty cycle autoscaling metric needs an"
                                 " accelerator.")
        if spec.target and not 1 <= spec.target <= 100:
            raise errors.invalid("autoscaling_metric_specs.target must be from 1 to 100.")


def _check_split(split: dict[str, int], known: set[str]) -> None:
    unknown = sorted(set(split) - known)
    if unknown:
        raise errors.invalid(f"traffic_split names deployed models that do not exist: {unknown}.")
    if any(v < 0 for v in split.values()) or sum(split.values()) != 100:
        raise errors.invalid("traffic_split percentages must add up to 100.")
