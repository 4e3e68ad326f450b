"""What the serving code needs from Vertex, as plain Python: the interface the backends in
controlplane/backends/ (endpoints.py, monitoring.py) implement, and the data they return. Nothing
here imports a Google library, so tests swap in a fake by the CP_SERVING_BACKEND setting.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

# DedicatedResources.autoscaling_metric_specs names, by the short name the app uses.
AUTOSCALING_METRICS = {
    "cpu": "aiplatform.googleapis.com/prediction/online/cpu/utilization",
    "accelerator": "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle",
}


@dataclass(frozen=True)
class Container:
    """Model.containerSpec: what each replica runs."""

    image_uri: str
    command: list[str]
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    health_route: str = "/health"
    predict_route: str = "/predict"
    port: int = 8080
    # containerSpec.deploymentTimeout: how long Vertex waits for the replicas to answer their
    # health route before it fails the deployment; 0 leaves Vertex's default.
    deployment_timeout_s: int = 0
    # containerSpec.sharedMemorySizeMb: /dev/shm of each replica (vLLM's tensor parallel
    # workers exchange tensors through it); 0 leaves Vertex's default.
    shared_memory_mb: int = 0


@dataclass(frozen=True)
class DeploySpec:
    deployed_model_id: str  # digits, chosen by us so a retried deploy finds the first one
    model_name: str
    display_name: str
    machine_type: str
    accelerator_type: str = ""
    accelerator_count: int = 0
    min_replicas: int = 1
    max_replicas: int = 1
    autoscaling_metric: str = ""  # a key of AUTOSCALING_METRICS, or "" for Vertex's default
    autoscaling_target: int = 0  # percent; 0 = Vertex's default (60)


@dataclass(frozen=True)
class Operation:
    name: str
    done: bool
    error_code: int = 0
    error_message: str = ""

    @property
    def failed(self) -> bool:
        return self.done and self.error_code != 0


@dataclass(frozen=True)
class RemoteDeployedModel:
    id: str
    model: str
    min_replicas: int
    max_replicas: int
    available_replicas: int


@dataclass(frozen=True)
class EndpointAccess:
    """How an endpoint is reached, fixed when it is created: the shared public domain (the
    default), a dedicated DNS name of its own, or Private Service Connect from the projects in
    the allowlist only."""

    dedicated: bool = False
    psc_project_allowlist: tuple[str, ...] = ()  # non-empty: a private (PSC) endpoint


@dataclass(frozen=True)
class RemoteEndpoint:
    name: str
    display_name: str
    labels: dict[str, str]
    deployed_models: tuple[RemoteDeployedModel, ...]
    traffic_split: dict[str, int]
    dedicated_dns: str = ""  # a dedicated endpoint's own DNS name
    service_attachment: str = ""  # a private endpoint's PSC service attachment

    def deployed(self, deployed_model_id: str) -> RemoteDeployedModel | None:
        return next((d for d in self.deployed_models if d.id == deployed_model_id), None)


@dataclass(frozen=True)
class PredictResult:
    predictions: list[Any]
    deployed_model_id: str


@dataclass(frozen=True)
class RawPredictResult:
    """rawPredict's answer: the model server's HTTP body as it sent it."""

    body: bytes
    content_type: str
    deployed_model_id: str  # "" when the answer does not say which deployed model served it


@dataclass(frozen=True)
class LatencyWindow:
    """One alignment period of Cloud Monitoring's view of an endpoint."""

    end: datetime
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    requests: int
    errors: int


class ServingBackend(abc.ABC):
    """Vertex AI's Model Registry, endpoints and online prediction (or the emulator's)."""

    project: str
    region: str

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def model_name(self, model_id: str) -> str:
        return f"{self.parent}/models/{model_id}"

    def endpoint_name(self, endpoint_id: str) -> str:
        return f"{self.parent}/endpoints/{endpoint_id}"

    @abc.abstractmethod
    def upload_model(self, model_id: str, display_name: str, artifact_uri: str,
                     container: Container, labels: dict[str, str]) -> Operation:
        """Register a model under `model_id`; an existing one of that id counts as done."""

    @abc.abstractmethod
    def model_exists(self, name: str) -> bool: ...

    @abc.abstractmethod
    def create_endpoint(self, endpoint_id: str, display_name: str, labels: dict[str, str],
                        access: EndpointAccess | None = None) -> Operation:
        """Create the endpoint `endpoint_id` (public unless `access` says otherwise); an
        existing one of that id counts as done."""

    @abc.abstractmethod
    def get_endpoint(self, name: str) -> RemoteEndpoint:
        """NotFound (controlplane.backends.errors) when it does not exist."""

    @abc.abstractmethod
    def delete_endpoint(self, name: str) -> Operation: ...

    @abc.abstractmethod
    def deploy_model(self, endpoint: str, spec: DeploySpec,
                     traffic_split: dict[str, int]) -> Operation:
        """traffic_split keys are deployed model ids ("0" = the one being deployed)."""

    @abc.abstractmethod
    def undeploy_model(self, endpoint: str, deployed_model_id: str,
                       traffic_split: dict[str, int]) -> Operation: ...

    @abc.abstractmethod
    def set_autoscaling(self, endpoint: str, spec: DeploySpec) -> Operation:
        """MutateDeployedModel: min/max replicas and the autoscaling metric and target."""

    @abc.abstractmethod
    def get_operation(self, name: str) -> Operation: ...

    @abc.abstractmethod
    def predict(self, endpoint: str, instances: list[Any], parameters: Any = None,
                timeout_s: float | None = None, dedicated_dns: str = "") -> PredictResult:
        """A prediction; a dedicated endpoint (`dedicated_dns`) is called at its own DNS
        name, as Vertex requires."""

    @abc.abstractmethod
    def raw_predict(self, endpoint: str, body: bytes, content_type: str = "application/json",
                    timeout_s: float | None = None,
                    dedicated_dns: str = "") -> RawPredictResult:
        """rawPredict: `body` goes to the serving container's predict route untouched, and its
        answer comes back untouched (how Triton's KServe v2 inference JSON is sent)."""

    @abc.abstractmethod
    def chat_completions(self, endpoint: str, body: bytes, timeout_s: float | None = None,
                         dedicated_dns: str = "") -> Iterator[bytes]:
        """Vertex's OpenAI-compatible chat completions (v1beta1 ChatCompletions): `body`, an
        OpenAI chat completions request, goes to the deployed model, and its answer comes back
        in chunks as the model server sends them (server-sent events when the body asks to
        stream, else one JSON object). A refusal before the first chunk raises at the call
        (BackendError: InvalidJobSpec for the model server's 4xx); one later, while iterating."""


class LatencySource(abc.ABC):
    """Where Vertex's own latency figures for an endpoint come from (Cloud Monitoring)."""

    @abc.abstractmethod
    def read(self, endpoint_id: str, start: datetime, end: datetime) -> list[LatencyWindow]: ...


@cache
def get_serving_backend() -> ServingBackend:
    return import_string(settings.CP_SERVING_BACKEND)()


@cache
def get_latency_source() -> LatencySource | None:
    """None against the emulator, which has no Cloud Monitoring."""
    path = latency_source()
    return import_string(path)() if path else None


# Cloud Monitoring's figures, unless set otherwise: against the emulator there are none.
MONITORING_SOURCE = "controlplane.backends.monitoring.CloudMonitoringLatency"


def latency_source() -> str:
    """The dotted path of the LatencySource in use; empty for none. CP_LATENCY_SOURCE: a dotted
    path, empty, or "auto" (Cloud Monitoring against Google, none against the emulator)."""
    value = settings.CP_LATENCY_SOURCE
    if value == "auto":
        return "" if settings.VERTEX_EMULATOR_ADDR else MONITORING_SOURCE
    return value
