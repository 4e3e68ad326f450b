"""The emulator's ModelService, EndpointService and PredictionService through Google's own
GAPIC clients: replicas of trainers.serve run as local processes, min_replica_count of them."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.api import httpbody_pb2
from google.api_core import exceptions as gexc
from google.cloud import aiplatform_v1 as v1
from google.cloud import aiplatform_v1beta1 as v1beta1
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
from google.protobuf import field_mask_pb2

from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess
from tests.serving.models import export_model

pytestmark = pytest.mark.trainers

PARENT = "projects/test-project/locations/us-central1"
CPU = "aiplatform.googleapis.com/prediction/online/cpu/utilization"


class Clients:
    def __init__(self, emulator: EmulatorProcess) -> None:
        self.channel = emulator.channel()
        self.endpoints = v1.EndpointServiceClient(
            transport=EndpointServiceGrpcTransport(channel=self.channel))
        self.models = v1.ModelServiceClient(
            transport=ModelServiceGrpcTransport(channel=self.channel))
        self.predictions = v1.PredictionServiceClient(
            transport=PredictionServiceGrpcTransport(channel=self.channel))
        self.predictions_v1beta1 = v1beta1.PredictionServiceClient(
            transport=PredictionServiceGrpcTransportV1beta1(channel=self.channel))
        self.admin = emulator.admin()

    def wait(self, operation: object, timeout: float = 120.0):
        """Poll GetOperation as the control plane does; the finished Operation."""
        name = operation.operation.name  # type: ignore[attr-defined]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            op = self.endpoints.get_operation(request={"name": name})
            if op.done:
                return op
            time.sleep(0.2)
        raise AssertionError(f"operation {name} did not finish")


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    data = tmp_path_factory.mktemp("serving") / "data"
    export_model(data / "gcs" / "bucket" / "jobs" / "job-1" / "model")
    emu = EmulatorProcess(data, FAST_FLAGS)
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture(scope="module")
def clients(emulator: EmulatorProcess) -> Iterator[Clients]:
    c = Clients(emulator)
    yield c
    c.admin.close()
    c.channel.close()


def upload(clients: Clients, model_id: str, artifact: str) -> str:
    op = clients.models.upload_model(request={
        "parent": PARENT, "model_id": model_id,
        "model": v1.Model(display_name=model_id, artifact_uri=artifact,
                          container_spec=v1.ModelContainerSpec(
                              image_uri="us-docker.pkg.dev/p/serve:1",
                              command=["python", "-m", "trainers.serve"],
                              args=["--threads", "1"], health_route="/health",
                              predict_route="/predict"))})
    assert op.done()
    return op.result().model


def deployed_model(model: str, deployed_id: str, replicas: int = 1) -> v1.DeployedModel:
    return v1.DeployedModel(
        id=deployed_id, model=model,
        dedicated_resources=v1.DedicatedResources(
            machine_spec=v1.MachineSpec(machine_type="n1-standard-2"),
            min_replica_count=replicas, max_replica_count=replicas + 2,
            autoscaling_metric_specs=[v1.AutoscalingMetricSpec(metric_name=CPU, target=70)]))


def test_deploy_predict_slow_down_resize_undeploy_delete(clients: Clients) -> None:
    model = upload(clients, "gpt-final", "gs://bucket/jobs/job-1/model")
    assert clients.models.get_model(name=model).artifact_uri == "gs://bucket/jobs/job-1/model"
    endpoint = clients.endpoints.create_endpoint(request={
        "parent": PARENT, "endpoint_id": "cp-ep-1",
        "endpoint": v1.Endpoint(display_name="prod", labels={"cp-endpoint": "1"})}).result()
    assert endpoint.name == f"{PARENT}/endpoints/cp-ep-1"
    with pytest.raises(gexc.AlreadyExists):
        clients.endpoints.create_endpoint(request={
            "parent": PARENT, "endpoint_id": "cp-ep-1", "endpoint": {"display_name": "x"}})

    op = clients.endpoints.deploy_model(endpoint=endpoint.name,
                                        deployed_model=deployed_model(model, "11", 2),
                                        traffic_split={"0": 100})
    assert not op.operation.done, "deploying finishes when the replicas are ready"
    assert clients.wait(op).error.code == 0
    endpoint = clients.endpoints.get_endpoint(name=endpoint.name)
    [deployed] = endpoint.deployed_models
    assert deployed.id == "11" and deployed.status.available_replica_count == 2
    assert dict(endpoint.traffic_split) == {"11": 100}
    assert deployed.dedicated_resources.autoscaling_metric_specs[0].target == 70

    response = clients.predictions.predict(
        endpoint=endpoint.name, instances=[{"prompt": "def ", "max_tokens": 4}, "import"],
        parameters={"max_tokens": 2})
    assert response.deployed_model_id == "11" and response.model == model
    assert [p["tokens"] for p in response.predictions] == [4, 2]
    raw = clients.predictions.raw_predict(request={
        "endpoint": endpoint.name,
        "http_body": httpbody_pb2.HttpBody(content_type="application/json",
                                           data=b'{"instances": ["x"]}')})
    assert b'"predictions"' in raw.data
    streamed_rpcs_answer_as_the_container_sends(clients, endpoint.name)
    with pytest.raises(gexc.InvalidArgument, match="max_tokens"):
        clients.predictions.predict(endpoint=endpoint.name,
                                    instances=[{"prompt": "x", "max_tokens": 0}])
    ports = clients.admin.call("GetEndpointReplicas", {"endpoint_id": "cp-ep-1"})
    assert len(ports["deployed_models"]["11"]["ready_ports"]) == 2

    # Slowed on purpose: a client deadline shorter than the added latency now expires.
    clients.admin.set_endpoint_latency("cp-ep-1", 3000)
    with pytest.raises(gexc.DeadlineExceeded):
        clients.predictions.predict(endpoint=endpoint.name, instances=["x"], timeout=0.5)
    clients.admin.set_endpoint_latency("cp-ep-1", 0)
    assert clients.predictions.predict(endpoint=endpoint.name, instances=["x"], timeout=30)

    op = clients.endpoints.mutate_deployed_model(
        endpoint=endpoint.name,
        deployed_model=v1.DeployedModel(id="11", dedicated_resources=v1.DedicatedResources(
            min_replica_count=1, max_replica_count=4)),
        update_mask=field_mask_pb2.FieldMask(paths=["dedicated_resources.min_replica_count",
                                                    "dedicated_resources.max_replica_count"]))
    assert clients.wait(op).error.code == 0
    [deployed] = clients.endpoints.get_endpoint(name=endpoint.name).deployed_models
    assert (deployed.dedicated_resources.min_replica_count,
            deployed.status.available_replica_count) == (1, 1)

    with pytest.raises(gexc.FailedPrecondition, match="undeploy them first"):
        clients.endpoints.delete_endpoint(name=endpoint.name)
    with pytest.raises(gexc.FailedPrecondition, match="undeploy it first"):
        clients.models.delete_model(name=model)
    assert clients.wait(clients.endpoints.undeploy_model(
        endpoint=endpoint.name, deployed_model_id="11")).error.code == 0
    endpoint = clients.endpoints.get_endpoint(name=endpoint.name)
    assert not endpoint.deployed_models and not endpoint.traffic_split
    with pytest.raises(gexc.FailedPrecondition, match="no deployed model"):
        clients.predictions.predict(endpoint=endpoint.name, instances=["x"])
    with pytest.raises(gexc.FailedPrecondition, match="no deployed model"):
        list(clients.predictions_v1beta1.chat_completions(request={
            "endpoint": endpoint.name, "http_body": httpbody_pb2.HttpBody(data=b"{}")}))
    clients.endpoints.delete_endpoint(name=endpoint.name).result()
    with pytest.raises(gexc.NotFound):
        clients.endpoints.get_endpoint(name=endpoint.name)


def streamed_rpcs_answer_as_the_container_sends(clients: Clients, endpoint: str) -> None:
    """v1beta1 ChatCompletions carries an OpenAI body to the replica and streams its
    server-sent events back as they come (several HttpBody messages), greedy text equal to
    Predict's on the same prompt; StreamRawPredict carries the predict route's body; the
    replica's 400 is INVALID_ARGUMENT with its body."""
    import json

    chat = {"messages": [{"role": "user", "content": "def "}], "max_tokens": 12,
            "temperature": 0}

    def call(body: dict) -> list[bytes]:
        return [m.data for m in clients.predictions_v1beta1.chat_completions(request={
            "endpoint": endpoint, "http_body": httpbody_pb2.HttpBody(
                content_type="application/json", data=json.dumps(body).encode())})]

    whole = json.loads(b"".join(call(chat)))
    text = whole["choices"][0]["message"]["content"]
    streamed = call({**chat, "stream": True})
    assert len(streamed) > 2, "the events come as the replica sends them, not at the end"
    events = b"".join(streamed).decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    deltas = [json.loads(e[6:])["choices"][0]["delta"].get("content", "") for e in events[:-2]]
    assert "".join(deltas) == text
    [predicted] = clients.predictions.predict(
        endpoint=endpoint, instances=[{"prompt": "user: def \nassistant: ", "max_tokens": 12}]
    ).predictions
    assert predicted["text"] == text
    with pytest.raises(gexc.InvalidArgument, match="max_tokens"):
        call({**chat, "max_tokens": 100_000})

    raw = list(clients.predictions.stream_raw_predict(request={
        "endpoint": endpoint, "http_body": httpbody_pb2.HttpBody(
            content_type="application/json", data=b'{"instances": ["x"]}')}))
    assert b'"predictions"' in b"".join(m.data for m in raw)


def test_a_model_server_that_never_starts_fails_the_deployment(
        clients: Clients, emulator: EmulatorProcess) -> None:
    model = upload(clients, "broken", "gs://bucket/jobs/job-1/nothing-here")
    endpoint = clients.endpoints.create_endpoint(request={
        "parent": PARENT, "endpoint_id": "cp-ep-2", "endpoint": {"display_name": "b"}}).result()
    op = clients.wait(clients.endpoints.deploy_model(
        endpoint=endpoint.name, deployed_model=deployed_model(model, "21"),
        traffic_split={"0": 100}))
    assert op.error.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert "never became ready" in op.error.message and "serving_failed" in op.error.message
    assert not clients.endpoints.get_endpoint(name=endpoint.name).deployed_models


def test_vertex_s_checks(clients: Clients) -> None:
    model = upload(clients, "checked", "gs://bucket/jobs/job-1/model")
    endpoint = clients.endpoints.create_endpoint(request={
        "parent": PARENT, "endpoint_id": "cp-ep-3", "endpoint": {"display_name": "c"}}).result()
    bad = deployed_model(model, "31")
    bad.dedicated_resources.min_replica_count = 0
    with pytest.raises(gexc.InvalidArgument, match="min_replica_count"):
        clients.endpoints.deploy_model(endpoint=endpoint.name, deployed_model=bad)
    duty = deployed_model(model, "31")
    duty.dedicated_resources.autoscaling_metric_specs[0].metric_name = CPU.replace(
        "cpu/utilization", "accelerator/duty_cycle")
    with pytest.raises(gexc.InvalidArgument, match="needs an accelerator"):
        clients.endpoints.deploy_model(endpoint=endpoint.name, deployed_model=duty)
    with pytest.raises(gexc.InvalidArgument, match="add up to 100"):
        clients.endpoints.deploy_model(endpoint=endpoint.name,
                                       deployed_model=deployed_model(model, "31"),
                                       traffic_split={"0": 50})
    with pytest.raises(gexc.NotFound):
        clients.endpoints.deploy_model(
            endpoint=endpoint.name,
            deployed_model=deployed_model(f"{PARENT}/models/missing", "31"))


def test_dedicated_and_private_endpoints_get_their_addresses_and_vertex_s_rules(
        clients: Clients) -> None:
    dedicated = clients.endpoints.create_endpoint(request={
        "parent": PARENT, "endpoint_id": "cp-ep-40",
        "endpoint": v1.Endpoint(display_name="d", dedicated_endpoint_enabled=True)}).result()
    # Vertex gives a DNS name of the endpoint's own; the emulator its HTTPS listener
    # (localvertex/serving/rest.py), where Google's SDK sends the endpoint's REST calls.
    host, port = dedicated.dedicated_endpoint_dns.split(":")
    assert host == "127.0.0.1" and int(port) > 0
    private = clients.endpoints.create_endpoint(request={
        "parent": PARENT, "endpoint_id": "cp-ep-41", "endpoint": v1.Endpoint(
            display_name="p", private_service_connect_config=v1.PrivateServiceConnectConfig(
                enable_private_service_connect=True, project_allowlist=["consumer-1"]))}
    ).result()
    attachment = private.private_service_connect_config.service_attachment
    assert attachment.endswith("/regions/us-central1/serviceAttachments/sa-cp-ep-41")
    assert clients.endpoints.get_endpoint(name=private.name).private_service_connect_config \
        .project_allowlist == ["consumer-1"]
    # The public path does not reach a private endpoint.
    model = upload(clients, "private-model", "gs://bucket/jobs/job-1/model")
    clients.wait(clients.endpoints.deploy_model(
        endpoint=private.name, deployed_model=deployed_model(model, "41"),
        traffic_split={"0": 100}))
    with pytest.raises(gexc.FailedPrecondition, match="private"):
        clients.predictions.predict(endpoint=private.name, instances=["x"])
    clients.wait(clients.endpoints.undeploy_model(endpoint=private.name,
                                                  deployed_model_id="41"))

    psc = v1.PrivateServiceConnectConfig(enable_private_service_connect=True)
    for endpoint, words in [
        (v1.Endpoint(display_name="x", private_service_connect_config=psc), "project_allowlist"),
        (v1.Endpoint(display_name="x", network="projects/1/global/networks/n",
                     private_service_connect_config=v1.PrivateServiceConnectConfig(
                         enable_private_service_connect=True, project_allowlist=["a-bcdef"])),
         "not both"),
        (v1.Endpoint(display_name="x", dedicated_endpoint_dns="mine.example.com"),
         "output only"),
    ]:
        with pytest.raises(gexc.InvalidArgument, match=words):
            clients.endpoints.create_endpoint(request={"parent": PARENT, "endpoint": endpoint})


def test_deployed_models_come_back_after_an_emulator_restart(
        tmp_path: Path, clients: Clients, emulator: EmulatorProcess) -> None:
    data = tmp_path / "data"
    shutil.copytree(emulator.data_dir / "gcs", data / "gcs")
    emu = EmulatorProcess(data, FAST_FLAGS)
    emu.start()
    mine = Clients(emu)
    try:
        model = upload(mine, "kept", "gs://bucket/jobs/job-1/model")
        endpoint = mine.endpoints.create_endpoint(request={
            "parent": PARENT, "endpoint_id": "cp-ep-4", "endpoint": {"display_name": "k"}
        }).result()
        mine.wait(mine.endpoints.deploy_model(endpoint=endpoint.name,
                                              deployed_model=deployed_model(model, "41"),
                                              traffic_split={"0": 100}))
        emu.restart()
        mine.channel.close()
        mine = Clients(emu)
        deadline = time.monotonic() + 60
        while mine.endpoints.get_endpoint(name=endpoint.name).deployed_models[0] \
                .status.available_replica_count < 1:
            assert time.monotonic() < deadline, "the replica did not come back"
            time.sleep(0.3)
        assert mine.predictions.predict(endpoint=endpoint.name, instances=["x"]).predictions
    finally:
        mine.admin.close()
        mine.channel.close()
        emu.stop()
