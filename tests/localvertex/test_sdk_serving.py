"""A user's own serving container through `google.cloud.aiplatform` only (tests/localvertex/
sdk.py): Model.upload(serving_container_image_uri=..., serving_container_command=...), then
model.deploy(endpoint, machine_type=...) and endpoint.predict, as the SDK's docs show them; the
fields the SDK reads on the way (deployment resource types, versions, deployed model ids,
traffic split) are Vertex's, and explain is refused as Vertex refuses it. A second version
uploaded with parent_model is kept, named and deployed as Model Registry does.

(The SDK's Endpoint.raw_predict goes over HTTPS REST, to a dedicated endpoint's own address:
test_sdk_raw_predict.py; the gRPC RawPredict is tested with the GAPIC client in tests/serving/.)
"""

from __future__ import annotations

import textwrap

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform
from google.cloud.aiplatform_v1 import Model as ModelPb

from tests.localvertex.helpers import EmulatorProcess
from tests.localvertex.sdk import sdk_channel
from tests.localvertex.team_probe import probe_as_team

# The user's model server: Vertex's custom-container contract (AIP_HTTP_PORT, the health and
# predict routes it was uploaded with); it answers each instance's sum.
SERVER = textwrap.dedent(
    """
    import json, os
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, body):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer({"healthy": self.path == os.environ["AIP_HEALTH_ROUTE"]})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            scale = int(os.environ.get("SCALE", "1"))
            self.answer({"predictions": [scale * sum(x) for x in body["instances"]]})

    HTTPServer(("127.0.0.1", int(os.environ["AIP_HTTP_PORT"])), Handler).serve_forever()
    """
)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess):
    with sdk_channel(monkeypatch, emulator):
        yield


def test_a_users_serving_container_uploads_deploys_and_predicts(sdk: None) -> None:
    model = aiplatform.Model.upload(
        display_name="adder",
        serving_container_image_uri="us-docker.pkg.dev/team-a/serving/adder:1",
        serving_container_command=["python", "-c", SERVER],
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
        instance_schema_uri="gs://team-a/schemata/instance.yaml",
    )
    # predict_schemata are the uploader's, as on Vertex.
    assert model.predict_schemata.instance_schema_uri == "gs://team-a/schemata/instance.yaml"
    assert model.supported_deployment_resources_types == [
        ModelPb.DeploymentResourcesType.DEDICATED_RESOURCES]
    assert model.version_id == "1"
    assert "default" in model.version_aliases

    endpoint = aiplatform.Endpoint.create(display_name="adder-endpoint")
    model.deploy(endpoint, machine_type="n1-standard-2")

    [deployed] = endpoint.list_models()
    assert deployed.model == model.resource_name
    assert deployed.model_version_id == "1"
    assert deployed.dedicated_resources.machine_spec.machine_type == "n1-standard-2"
    assert endpoint.traffic_split == {deployed.id: 100}
    [ref] = aiplatform.Model(model.resource_name).gca_resource.deployed_models
    assert (ref.endpoint, ref.deployed_model_id) == (endpoint.resource_name, deployed.id)

    prediction = endpoint.predict(instances=[[1, 2], [3, 4]])
    assert prediction.predictions == [3, 7]
    assert prediction.deployed_model_id == deployed.id
    assert prediction.model_resource_name == model.resource_name
    assert prediction.model_version_id == "1"

    with pytest.raises(exceptions.FailedPrecondition,
                       match=f"Deployed model {deployed.id} does not support explanation"):
        endpoint.explain(instances=[[1, 2]])

    # A deployed model cannot be deleted; undeployed, the model and endpoint can.
    with pytest.raises(exceptions.FailedPrecondition, match="undeploy it first"):
        model.delete()
    endpoint.undeploy_all()
    assert endpoint.list_models() == []
    assert not aiplatform.Model(model.resource_name).gca_resource.deployed_models
    endpoint.delete()
    model.delete()
    assert model.resource_name not in [m.resource_name for m in aiplatform.Model.list()]


def test_a_new_version_is_kept_named_and_deployed_as_model_registry_does(sdk: None) -> None:
    serving = {"serving_container_image_uri": "us-docker.pkg.dev/team-a/serving/adder:1",
               "serving_container_command": ["python", "-c", SERVER],
               "serving_container_predict_route": "/predict",
               "serving_container_health_route": "/health"}
    first = aiplatform.Model.upload(display_name="scaler", **serving)
    second = aiplatform.Model.upload(
        display_name="scaler", parent_model=first.resource_name, is_default_version=False,
        version_aliases=["candidate"], serving_container_environment_variables={"SCALE": "10"},
        **serving)

    assert second.resource_name == first.resource_name
    assert second.version_id == "2"
    # The default version stays the first; the alias and the ID name the second.
    assert aiplatform.Model(first.resource_name).version_id == "1"
    assert aiplatform.Model(first.resource_name, version="candidate").version_id == "2"
    registry = first.versioning_registry
    versions = {v.version_id: list(v.version_aliases) for v in registry.list_versions()}
    assert versions == {"1": ["default"], "2": ["candidate"]}

    endpoint = aiplatform.Endpoint.create(display_name="scaler-endpoint")
    aiplatform.Model(first.resource_name, version="2").deploy(endpoint,
                                                             machine_type="n1-standard-2")
    [deployed] = endpoint.list_models()
    assert (deployed.model, deployed.model_version_id) == (first.resource_name, "2")
    prediction = endpoint.predict(instances=[[1, 2]])
    assert (prediction.predictions, prediction.model_version_id) == ([30], "2")
    assert not aiplatform.Model(first.resource_name).gca_resource.deployed_models
    [ref] = aiplatform.Model(first.resource_name, version="2").gca_resource.deployed_models
    assert ref.deployed_model_id == deployed.id

    with pytest.raises(exceptions.FailedPrecondition, match="default version"):
        registry.delete_version("1")
    with pytest.raises(exceptions.FailedPrecondition, match="undeploy it first"):
        registry.delete_version("2")
    endpoint.undeploy_all()
    registry.delete_version("2")
    assert [v.version_id for v in registry.list_versions()] == ["1"]
    endpoint.delete()
    first.delete()


def test_a_teams_model_server_runs_as_its_teams_user(sdk: None,
                                                     emulator: EmulatorProcess) -> None:
    """A model the control plane labelled for a team is served as that team's user, as its
    jobs run (localvertex/replicas/team_users.py): no other team's process can read its
    server's environment or signal it. It listens in its deployment's own network namespace
    (serving/model_servers.py): predictions reach it through the emulator, while nothing on
    the host's loopback (a Ray node, the emulator's own port space) nor another team's job
    can connect to its port."""
    import os
    import pwd
    import uuid

    from localvertex.replicas import team_users
    from tests.conftest import require

    require(os.geteuid() == 0, "team users and namespaces need root (CI runs these as root)")
    marker = f"team-server-{uuid.uuid4().hex[:8]}"
    model = aiplatform.Model.upload(
        display_name="team-adder",
        serving_container_image_uri="us-docker.pkg.dev/team-a/serving/adder:1",
        serving_container_command=["python", "-c", SERVER + f"# {marker}\n"],
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
        labels={"cp-team": "vision"},
    )
    endpoint = aiplatform.Endpoint.create(display_name="team-adder-endpoint")
    try:
        model.deploy(endpoint, machine_type="n1-standard-2")
        assert endpoint.predict(instances=[[1, 2]]).predictions == [3]
        servers = [pid for pid in os.listdir("/proc") if pid.isdigit()
                   and marker.encode() in _cmdline(pid)]
        assert servers, "the model server's process was not found"
        host_net = os.readlink("/proc/self/ns/net")
        for pid in servers:
            uid = os.stat(f"/proc/{pid}").st_uid
            assert pwd.getpwuid(uid).pw_name == team_users.user_name("vision")
            assert os.readlink(f"/proc/{pid}/ns/net") != host_net
        port = int(_environ(servers[0])["AIP_HTTP_PORT"])
        # Its Cloud Storage is its deployment's door (the host's port number, in its
        # namespace: localvertex/storage/doors.py), for its team's folders only.
        assert _environ(servers[0])["STORAGE_EMULATOR_HOST"] == emulator.storage_host
        assert not _answers(port), "the model server answered on the host's loopback"
        assert probe_as_team(emulator, "speech", [port]) == {port: "ConnectionRefusedError"}
        assert endpoint.predict(instances=[[2, 3]]).predictions == [5]  # still served
    finally:
        endpoint.undeploy_all()
        endpoint.delete()
        model.delete()


def _answers(port: int) -> bool:
    """Whether a model server answers its health route on the host's 127.0.0.1:PORT (a
    connection alone could be some other process's that took the port number since)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def _environ(pid: str) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as handle:
        items = handle.read().decode(errors="replace").split("\0")
    return dict(item.split("=", 1) for item in items if "=" in item)


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""
