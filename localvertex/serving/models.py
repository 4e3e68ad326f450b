"""google.cloud.aiplatform.v1.ModelService (the parts endpoints need): UploadModel (done at
once), GetModel, ListModels, DeleteModel. Vertex's checks that a local run depends on are made
here and answered with the same status codes.

The output-only fields the SDK reads are set as Vertex sets them on a custom-container model:
supported_deployment_resources_types DEDICATED_RESOURCES (Model.deploy(machine_type=...) refuses
a model without it: VERTEX_FACTS.md A10), the first version's version_id "1" with the "default"
alias and its times, model_source_info CUSTOM, an etag, and deployed_models: a reference to each
DeployedModel that serves it, read from the endpoints when the model is read. predict_schemata
is the uploader's, as on Vertex (a custom container has no schemata of its own). The emulator
keeps one version per model: an upload as a new version of a parent_model is refused.
"""

from __future__ import annotations

import grpc
from google.protobuf import empty_pb2

from localvertex.core.errors import ApiError, failed_precondition, invalid, not_found
from localvertex.core.operations import Operations
from localvertex.core.resources import check_parent, location_of, matches, now, page
from localvertex.core.store import Conflict, Store
from localvertex.serving.checks import MODEL_ID, MODEL_NAME
from localvertex.serving.messages import (
    DeleteModelRequest,
    DeleteOperationMetadata,
    GetModelRequest,
    ListModelsRequest,
    ListModelsResponse,
    UploadModelOperationMetadata,
    UploadModelRequest,
    UploadModelResponse,
)
from localvertex.serving.store import ModelPb

MODEL_SERVICE = "google.cloud.aiplatform.v1.ModelService"
DEDICATED_RESOURCES = ModelPb.DeploymentResourcesType.DEDICATED_RESOURCES
CUSTOM_SOURCE = ModelPb.DESCRIPTOR.fields_by_name["model_source_info"].message_type \
    .enum_types_by_name["ModelSourceType"].values_by_name["CUSTOM"].number
FIRST_VERSION = "1"
# A version ID or alias after '@' that names the one version the emulator keeps.
_FIRST_VERSION_NAMES = ("", "@1", "@default")


class ModelService:
    def __init__(self, store: Store, endpoints: Store, operations: Operations) -> None:
        self.store = store
        self.endpoints = endpoints  # a model deployed to one of them cannot be deleted
        self.operations = operations

    def load(self, name: str) -> ModelPb:  # type: ignore[valid-type]
        m = MODEL_NAME.match(name)
        if not m:
            raise invalid(f"name {name!r} is not projects/P/locations/L/models/ID.")
        model = self.store.get(f"{m.group(1)}/models/{m.group(2)}")
        if model is None or (m.group(3) or "") not in _FIRST_VERSION_NAMES:
            raise not_found(f'Model "{name}" not found.')
        return model

    def register(self, parent: str, requested, model_id: str = "", parent_model: str = "",
                 where: str = "model") -> ModelPb:  # type: ignore[valid-type]
        """Store a new Model as UploadModel does (a TrainingPipeline's model_to_upload comes
        this way too); `where` names the request's field in errors."""
        if parent_model:
            raise invalid(f"parent_model {parent_model!r}: the emulator keeps one version per "
                          "model; upload the new model without parent_model.")
        model = ModelPb()
        model.CopyFrom(requested)
        for output_only in ("name", "version_id", "version_create_time", "version_update_time",
                            "create_time", "update_time", "deployed_models", "etag",
                            "supported_deployment_resources_types", "model_source_info"):
            model.ClearField(output_only)
        check_model(model, where)
        model_id = model_id or self.store.new_id()
        if not (MODEL_ID.match(model_id) or model_id.isdigit()):
            raise invalid(f"model_id {model_id!r}: up to 63 of [a-z0-9_-], not starting"
                          " with a digit or '-'.")
        model.name = f"{parent}/models/{model_id}"
        stamp = now()
        model.version_id = FIRST_VERSION
        if "default" not in model.version_aliases:
            model.version_aliases.insert(0, "default")
        for field in ("create_time", "update_time", "version_create_time",
                      "version_update_time"):
            getattr(model, field).CopyFrom(stamp)
        model.supported_deployment_resources_types.append(DEDICATED_RESOURCES)
        model.model_source_info.source_type = CUSTOM_SOURCE
        model.etag = self.store.new_id()
        try:
            self.store.insert(model)
        except Conflict as exc:
            raise ApiError(grpc.StatusCode.ALREADY_EXISTS,
                           f"Model {model.name} already exists.") from exc
        return model

    def upload_model(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        model = self.register(parent, request.model, request.model_id, request.parent_model)
        return self.operations.done(
            parent, UploadModelOperationMetadata(),
            UploadModelResponse(model=model.name, model_version_id=model.version_id),
        )

    def _with_deployments(self, model) -> ModelPb:  # type: ignore[valid-type]
        """Model.deployed_models: each DeployedModel serving it, as Vertex reports them."""
        del model.deployed_models[:]
        for endpoint in self.endpoints.select("parent = ?", (location_of(model.name),)):
            for deployed in endpoint.deployed_models:
                if deployed.model == model.name:
                    model.deployed_models.add(endpoint=endpoint.name,
                                              deployed_model_id=deployed.id)
        return model

    def get_model(self, request, context: grpc.ServicerContext):
        return self._with_deployments(self.load(request.name))

    def list_models(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        models = [self._with_deployments(m) for m in self.store.select("parent = ?", (parent,))
                  if matches(m.labels, request.filter)]
        chunk, token = page(models, request.page_size, request.page_token)
        return ListModelsResponse(models=chunk, next_page_token=token)

    def delete_model(self, request, context: grpc.ServicerContext):
        model = self.load(request.name)
        for endpoint in self.endpoints.select():
            if any(d.model == model.name for d in endpoint.deployed_models):
                raise failed_precondition(
                    f"Model {model.name} is deployed to {endpoint.name}: undeploy it first."
                )
        self.store.delete(model.name)
        return self.operations.done(location_of(model.name), DeleteOperationMetadata(),
                                    empty_pb2.Empty())

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "UploadModel": (self.upload_model, UploadModelRequest),
            "GetModel": (self.get_model, GetModelRequest),
            "ListModels": (self.list_models, ListModelsRequest),
            "DeleteModel": (self.delete_model, DeleteModelRequest),
        }


def check_model(model, where: str = "model") -> None:
    """UploadModelRequest.model (or a pipeline's model_to_upload, `where`): what Vertex
    requires, and what a local run needs."""
    if not model.display_name:
        raise invalid(f"{where}.display_name is required.")
    if not model.container_spec.image_uri:
        raise invalid(f"{where}.container_spec.image_uri is required.")
    if not model.container_spec.command and not model.container_spec.args:
        raise invalid(
            f"{where}.container_spec.command is required by the local emulator, which cannot"
            " run an image's entrypoint."
        )
    if model.artifact_uri and not model.artifact_uri.startswith("gs://"):
        raise invalid(f"{where}.artifact_uri must be a gs:// URI.")
