"""google.cloud.aiplatform.v1.ModelService (the parts endpoints need): UploadModel (done at
once), GetModel, ListModels, DeleteModel. Vertex's checks that a local run depends on are made
here and answered with the same status codes."""

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
        if model is None:
            raise not_found(f'Model "{name}" not found.')
        return model

    def upload_model(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        model = ModelPb()
        model.CopyFrom(request.model)
        _check_model(model)
        model_id = request.model_id or self.store.new_id()
        if not (MODEL_ID.match(model_id) or model_id.isdigit()):
            raise invalid(f"model_id {model_id!r}: up to 63 of [a-z0-9_-], not starting"
                          " with a digit or '-'.")
        model.name = f"{parent}/models/{model_id}"
        model.version_id = "1"
        model.create_time.CopyFrom(now())
        model.update_time.CopyFrom(now())
        model.version_create_time.CopyFrom(now())
        try:
            self.store.insert(model)
        except Conflict as exc:
            raise ApiError(grpc.StatusCode.ALREADY_EXISTS,
                           f"Model {model.name} already exists.") from exc
        return self.operations.done(
            parent, UploadModelOperationMetadata(),
            UploadModelResponse(model=model.name, model_version_id="1"),
        )

    def get_model(self, request, context: grpc.ServicerContext):
        return self.load(request.name)

    def list_models(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        models = [m for m in self.store.select("parent = ?", (parent,))
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


def _check_model(model) -> None:
    """UploadModelRequest.model: what Vertex requires, and what a local run needs."""
    if not model.display_name:
        raise invalid("model.display_name is required.")
    if not model.container_spec.image_uri:
        raise invalid("model.container_spec.image_uri is required.")
    if not model.container_spec.command and not model.container_spec.args:
        raise invalid(
            "model.container_spec.command is required by the local emulator, which cannot"
            " run an image's entrypoint."
        )
    if model.artifact_uri and not model.artifact_uri.startswith("gs://"):
        raise invalid("model.artifact_uri must be a gs:// URI.")
