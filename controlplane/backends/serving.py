"""Vertex AI Model Registry, endpoints and online prediction through Google's GAPIC clients.

Like vertex.py, one class for Google (`{region}-aiplatform.googleapis.com`, Application Default
Credentials) and the local emulator (VERTEX_EMULATOR_ADDR, plaintext gRPC, one channel for all
clients). Long-running operations are returned, not waited for: deploying takes minutes on
Vertex, so the serving reconciler polls GetOperation instead of holding a worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.conf import settings
from google.api import httpbody_pb2
from google.api_core import exceptions as gexc
from google.api_core import gapic_v1
from google.cloud import aiplatform_v1, aiplatform_v1beta1
from google.cloud.aiplatform_v1.services.endpoint_service.transports import (
    EndpointServiceGrpcTransport,
)
from google.cloud.aiplatform_v1.services.model_service.transports import (
    ModelServiceGrpcTransport,
)
from google.cloud.aiplatform_v1.services.prediction_service.transports import (
    PredictionServiceGrpcTransport,
)
from google.cloud.aiplatform_v1beta1.services.prediction_service.transports import (
    PredictionServiceGrpcTransport as PredictionServiceGrpcTransportV1beta1,
)
from google.longrunning import operations_pb2
from google.protobuf import duration_pb2, field_mask_pb2, json_format

from controlplane.backends import clients, errors
from controlplane.backends.serving_base import (
    AUTOSCALING_METRICS,
    Container,
    DeploySpec,
    EndpointAccess,
    Operation,
    PredictResult,
    RawPredictResult,
    RemoteDeployedModel,
    RemoteEndpoint,
    ServingBackend,
)
from controlplane.backends.training import translated_errors

T = TypeVar("T")

# The metadata naming the deployed model that served a rawPredict (the emulator sends it as
# trailing metadata; where Vertex puts it on gRPC is UNCONFIRMED, so both places are read).
DEPLOYED_MODEL_HEADER = "x-vertex-ai-deployed-model-id"


def _operation(op: Any) -> Operation:
    """From an api_core Operation future or a raw longrunning Operation."""
    pb: operations_pb2.Operation = op.operation if hasattr(op, "operation") else op
    error_code = pb.error.code if pb.HasField("error") else 0
    return Operation(pb.name, pb.done, error_code, pb.error.message if error_code else "")


def _done(name: str) -> Operation:
    return Operation(name=name, done=True)


def _deployed_model(spec: DeploySpec) -> aiplatform_v1.DeployedModel:
    machine = aiplatform_v1.MachineSpec(machine_type=spec.machine_type)
    if spec.accelerator_type:
        machine.accelerator_type = aiplatform_v1.AcceleratorType[spec.accelerator_type]
        machine.accelerator_count = spec.accelerator_count
    resources = aiplatform_v1.DedicatedResources(
        machine_spec=machine,
        min_replica_count=spec.min_replicas,
        max_replica_count=spec.max_replicas,
    )
    if spec.autoscaling_metric:
        resources.autoscaling_metric_specs = [aiplatform_v1.AutoscalingMetricSpec(
            metric_name=AUTOSCALING_METRICS[spec.autoscaling_metric],
            target=spec.autoscaling_target,
        )]
    return aiplatform_v1.DeployedModel(
        id=spec.deployed_model_id, model=spec.model_name, display_name=spec.display_name,
        dedicated_resources=resources,
    )


def _remote_endpoint(endpoint: aiplatform_v1.Endpoint) -> RemoteEndpoint:
    return RemoteEndpoint(
        name=endpoint.name,
        display_name=endpoint.display_name,
        labels=dict(endpoint.labels),
        deployed_models=tuple(
            RemoteDeployedModel(
                id=d.id, model=d.model,
                min_replicas=d.dedicated_resources.min_replica_count,
                max_replicas=d.dedicated_resources.max_replica_count,
                available_replicas=d.status.available_replica_count,
            )
            for d in endpoint.deployed_models
        ),
        traffic_split=dict(endpoint.traffic_split),
        dedicated_dns=endpoint.dedicated_endpoint_dns,
        service_attachment=endpoint.private_service_connect_config.service_attachment,
    )


class VertexServing(ServingBackend):
    def __init__(self) -> None:
        self.project = settings.VERTEX_PROJECT
        self.region = settings.VERTEX_REGION
        self.timeout = settings.VERTEX_RPC_TIMEOUT_S
        channel = clients.emulator_channel()
        self.channel = channel
        self._dedicated: dict[str, aiplatform_v1.PredictionServiceClient] = {}
        self.endpoints = clients.google_client(aiplatform_v1.EndpointServiceClient,
                                               EndpointServiceGrpcTransport, channel)
        self.models = clients.google_client(aiplatform_v1.ModelServiceClient,
                                            ModelServiceGrpcTransport, channel)
        self.predictions = clients.google_client(aiplatform_v1.PredictionServiceClient,
                                                 PredictionServiceGrpcTransport, channel)
        # ChatCompletions is v1beta1's alone (googleapis v1beta1 prediction_service.proto).
        self.predictions_v1beta1 = clients.google_client(
            aiplatform_v1beta1.PredictionServiceClient, PredictionServiceGrpcTransportV1beta1,
            channel)
        self._dedicated_v1beta1: dict[str, aiplatform_v1beta1.PredictionServiceClient] = {}

    def _dedicated_client(self, dns: str) -> aiplatform_v1.PredictionServiceClient:
        """The prediction client for a dedicated endpoint's own DNS name (the shared regional
        domain refuses its traffic). On the emulator every endpoint answers at one address."""
        if self.channel is not None:
            return self.predictions
        client = self._dedicated.get(dns)
        if client is None:
            client = aiplatform_v1.PredictionServiceClient(client_options={"api_endpoint": dns})
            self._dedicated[dns] = client
        return client

    def _dedicated_client_v1beta1(self, dns: str) -> aiplatform_v1beta1.PredictionServiceClient:
        if self.channel is not None:
            return self.predictions_v1beta1
        client = self._dedicated_v1beta1.get(dns)
        if client is None:
            client = aiplatform_v1beta1.PredictionServiceClient(
                client_options={"api_endpoint": dns})
            self._dedicated_v1beta1[dns] = client
        return client

    def _call(self, what: str, fn: Callable[..., T], timeout: float | None = None,
              **kwargs: Any) -> T:
        # retry=None: retrying is the tasks' decision (controlplane.core.queue.task).
        with translated_errors(what):
            return fn(retry=None, timeout=timeout or self.timeout, **kwargs)

    # -- Model Registry ------------------------------------------------------------------------

    def upload_model(self, model_id: str, display_name: str, artifact_uri: str,
                     container: Container, labels: dict[str, str]) -> Operation:
        model = aiplatform_v1.Model(
            display_name=display_name,
            artifact_uri=artifact_uri,
            labels=labels,
            container_spec=aiplatform_v1.ModelContainerSpec(
                image_uri=container.image_uri,
                command=container.command,
                args=container.args,
                env=[aiplatform_v1.EnvVar(name=k, value=v) for k, v in container.env.items()],
                ports=[aiplatform_v1.Port(container_port=container.port)],
                health_route=container.health_route,
                predict_route=container.predict_route,
            ),
        )
        if container.deployment_timeout_s:  # unset: Vertex's default
            model.container_spec.deployment_timeout = duration_pb2.Duration(
                seconds=container.deployment_timeout_s)
        if container.shared_memory_mb:  # unset: Vertex's default
            model.container_spec.shared_memory_size_mb = container.shared_memory_mb
        try:
            with translated_errors("UploadModel"):
                op = self.models.upload_model(
                    request={"parent": self.parent, "model_id": model_id, "model": model},
                    retry=None, timeout=self.timeout)
        except errors.BackendError as exc:
            if isinstance(exc.__cause__, gexc.AlreadyExists):
                return _done(self.model_name(model_id))  # an earlier try uploaded it
            raise
        return _operation(op)

    def model_exists(self, name: str) -> bool:
        try:
            self._call("GetModel", self.models.get_model, name=name)
        except errors.NotFound:
            return False
        return True

    # -- endpoints -----------------------------------------------------------------------------

    def create_endpoint(self, endpoint_id: str, display_name: str, labels: dict[str, str],
                        access: EndpointAccess | None = None) -> Operation:
        endpoint = aiplatform_v1.Endpoint(display_name=display_name, labels=labels)
        if access is not None and access.dedicated:
            endpoint.dedicated_endpoint_enabled = True
        if access is not None and access.psc_project_allowlist:
            endpoint.private_service_connect_config = aiplatform_v1.PrivateServiceConnectConfig(
                enable_private_service_connect=True,
                project_allowlist=list(access.psc_project_allowlist))
        try:
            with translated_errors("CreateEndpoint"):
                op = self.endpoints.create_endpoint(
                    request={"parent": self.parent, "endpoint": endpoint,
                             "endpoint_id": endpoint_id},
                    retry=None, timeout=self.timeout)
        except errors.BackendError as exc:
            if isinstance(exc.__cause__, gexc.AlreadyExists):
                return _done(self.endpoint_name(endpoint_id))
            raise
        return _operation(op)

    def get_endpoint(self, name: str) -> RemoteEndpoint:
        return _remote_endpoint(self._call("GetEndpoint", self.endpoints.get_endpoint, name=name))

    def delete_endpoint(self, name: str) -> Operation:
        try:
            op = self._call("DeleteEndpoint", self.endpoints.delete_endpoint, name=name)
        except errors.NotFound:
            return _done(name)  # already gone: what a retried delete finds
        return _operation(op)

    def deploy_model(self, endpoint: str, spec: DeploySpec,
                     traffic_split: dict[str, int]) -> Operation:
        op = self._call("DeployModel", self.endpoints.deploy_model, endpoint=endpoint,
                        deployed_model=_deployed_model(spec), traffic_split=traffic_split)
        return _operation(op)

    def undeploy_model(self, endpoint: str, deployed_model_id: str,
                       traffic_split: dict[str, int]) -> Operation:
        op = self._call("UndeployModel", self.endpoints.undeploy_model, endpoint=endpoint,
                        deployed_model_id=deployed_model_id, traffic_split=traffic_split)
        return _operation(op)

    def set_autoscaling(self, endpoint: str, spec: DeploySpec) -> Operation:
        mask = field_mask_pb2.FieldMask(paths=[
            "dedicated_resources.min_replica_count",
            "dedicated_resources.max_replica_count",
            "dedicated_resources.autoscaling_metric_specs",
        ])
        op = self._call("MutateDeployedModel", self.endpoints.mutate_deployed_model,
                        endpoint=endpoint, deployed_model=_deployed_model(spec),
                        update_mask=mask)
        return _operation(op)

    def get_operation(self, name: str) -> Operation:
        op = self._call("GetOperation", self.endpoints.get_operation, request={"name": name})
        return _operation(op)

    # -- prediction ------------------------------------------------------------------------------

    def predict(self, endpoint: str, instances: list[Any], parameters: Any = None,
                timeout_s: float | None = None, dedicated_dns: str = "") -> PredictResult:
        # Built as protobuf: proto-plus would turn the Values back into Python containers.
        pb = aiplatform_v1.PredictRequest.pb()(endpoint=endpoint)
        for instance in instances:
            json_format.ParseDict(instance, pb.instances.add())
        if parameters is not None:
            json_format.ParseDict(parameters, pb.parameters)
        request = aiplatform_v1.PredictRequest.wrap(pb)
        client = self._dedicated_client(dedicated_dns) if dedicated_dns else self.predictions
        response = self._call("Predict", client.predict, timeout=timeout_s, request=request)
        pb = aiplatform_v1.PredictResponse.pb(response)
        # MessageToDict of a Value is the plain JSON value it holds.
        predictions = [json_format.MessageToDict(v) for v in pb.predictions]
        return PredictResult(predictions, pb.deployed_model_id)

    def raw_predict(self, endpoint: str, body: bytes, content_type: str = "application/json",
                    timeout_s: float | None = None,
                    dedicated_dns: str = "") -> RawPredictResult:
        client = self._dedicated_client(dedicated_dns) if dedicated_dns else self.predictions
        # The GAPIC method hides the call's metadata, so the transport's stub is wrapped the
        # way the client wraps it (error translation, the routing header), keeping the call.
        rpc = gapic_v1.method.wrap_method(client.transport.raw_predict, with_call=True)
        request = aiplatform_v1.RawPredictRequest(
            endpoint=endpoint,
            http_body=httpbody_pb2.HttpBody(content_type=content_type, data=body))
        routing = gapic_v1.routing_header.to_grpc_metadata((("endpoint", endpoint),))
        response, call = self._call("RawPredict", rpc, timeout=timeout_s, request=request,
                                    metadata=(routing,))
        metadata = [*(call.initial_metadata() or ()), *(call.trailing_metadata() or ())]
        served_by = next((value for key, value in metadata
                          if key.lower() == DEPLOYED_MODEL_HEADER), "")
        return RawPredictResult(response.data, response.content_type, str(served_by))

    def chat_completions(self, endpoint: str, body: bytes, timeout_s: float | None = None,
                         dedicated_dns: str = "") -> Iterator[bytes]:
        client = (self._dedicated_client_v1beta1(dedicated_dns) if dedicated_dns
                  else self.predictions_v1beta1)
        request = aiplatform_v1beta1.ChatCompletionsRequest(
            endpoint=endpoint,
            http_body=httpbody_pb2.HttpBody(content_type="application/json", data=body))
        # api_core waits for the stream's first answer here, so a refusal raises now, before
        # the caller has answered anything of its own.
        stream = self._call("ChatCompletions", client.chat_completions, timeout=timeout_s,
                            request=request)
        return _Chunks("ChatCompletions", stream)


class _Chunks:
    """The data of each HttpBody of a server stream, a failure midway translated as a call's;
    close() ends the call, from any thread (a reader may be waiting on the next answer)."""

    def __init__(self, what: str, stream: Any) -> None:
        self.what = what
        self.stream = stream

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while True:
            with translated_errors(self.what):
                body = next(self.stream, None)
            if body is None:
                raise StopIteration
            if body.data:
                return body.data

    def close(self) -> None:
        cancel = getattr(self.stream, "cancel", None)
        if cancel is not None:
            cancel()
