"""Endpoint.raw_predict from Google's high-level SDK, unchanged (issue 35 item 2).

The SDK sends raw_predict over HTTPS REST with google.auth's AuthorizedSession (requests), to
`https://{endpoint.dedicated_endpoint_dns}/v1/{name}:rawPredict` for a dedicated endpoint,
else to the fixed host {location}-aiplatform.googleapis.com, which no local emulator can be:
so the user's script creates its endpoint with dedicated_endpoint_enabled=True, and the
emulator gives it its HTTPS listener (localvertex/serving/rest.py) as that DNS name. The
script trusts the emulator's self-signed certificate as requests trusts any:
REQUESTS_CA_BUNDLE. Model.upload, deploy and predict are test_sdk_serving.py's.
"""

from __future__ import annotations

import pytest
import requests
from google.cloud import aiplatform

from localvertex.serving.rest import CERT_FILE, KEY_FILE
from tests.localvertex.helpers import EmulatorProcess
from tests.localvertex.sdk import sdk_channel
from tests.localvertex.test_sdk_serving import SERVER


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess):
    # What the user's shell would export: the emulator's certificate as requests' CA bundle.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(emulator.data_dir / CERT_FILE))
    with sdk_channel(monkeypatch, emulator):
        yield


def test_raw_predict_reaches_a_dedicated_endpoint_over_https(sdk: None,
                                                             emulator: EmulatorProcess) -> None:
    # The certificate's key is the emulator's alone.
    assert (emulator.data_dir / KEY_FILE).stat().st_mode & 0o777 == 0o600
    model = aiplatform.Model.upload(
        display_name="raw-adder",
        serving_container_image_uri="us-docker.pkg.dev/team-a/serving/adder:1",
        serving_container_command=["python", "-c", SERVER],
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
    )
    endpoint = aiplatform.Endpoint.create(display_name="raw-adder-endpoint",
                                          dedicated_endpoint_enabled=True)
    try:
        assert endpoint.dedicated_endpoint_dns.startswith("127.0.0.1:")
        model.deploy(endpoint, machine_type="n1-standard-2")
        [deployed] = endpoint.list_models()

        response = endpoint.raw_predict(body=b'{"instances": [[1, 2], [3, 4]]}',
                                        headers={"Content-Type": "application/json"},
                                        use_dedicated_endpoint=True)
        assert response.status_code == 200, response.text
        assert response.json() == {"predictions": [3, 7]}
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["X-Vertex-AI-Deployed-Model-Id"] == deployed.id
        # predict(use_dedicated_endpoint=True) takes the same listener's REST :predict.
        prediction = endpoint.predict(instances=[[5, 6]], use_dedicated_endpoint=True)
        assert (prediction.predictions, prediction.deployed_model_id) == ([11], deployed.id)

        # Another token is refused, in Google's JSON error shape; so is an unknown path
        # (after the token: a guesser learns no paths).
        url = f"https://{endpoint.dedicated_endpoint_dns}/v1/{endpoint.resource_name}"
        # (requests itself: google.auth's session would try to refresh a refused token.)
        stranger = {"Authorization": "Bearer not-the-emulator-s",
                    "Content-Type": "application/json"}
        refused = requests.post(f"{url}:rawPredict", data=b'{"instances": [[1]]}',
                                headers=stranger, timeout=30)
        assert refused.status_code == 401
        assert refused.json()["error"]["status"] == "UNAUTHENTICATED"
        assert requests.post(f"{url}:nothing", data=b"{}", headers=stranger,
                             timeout=30).status_code == 401
        unknown = endpoint.authorized_session.post(f"{url}:nothing", data=b"{}")
        assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, 404)

        # Vertex's own refusals are its REST ones: an endpoint with no model is 400.
        endpoint.undeploy_all()
        empty = endpoint.raw_predict(body=b'{"instances": [[1, 2]]}',
                                     headers={"Content-Type": "application/json"},
                                     use_dedicated_endpoint=True)
        assert empty.status_code == 400
        assert empty.json()["error"]["status"] == "FAILED_PRECONDITION"
    finally:
        endpoint.undeploy_all()
        endpoint.delete()
        model.delete()
