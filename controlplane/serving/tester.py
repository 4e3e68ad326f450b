"""The endpoint page's prediction tester: one request a person writes, checked here, sent
through the serving backend the API's predict uses (predictions.py: never from the browser to
the endpoint), and answered with the predictions and the round trip's time.

Everything typed is refused before anything is sent when it is not a request the model would
answer: more than MAX_BODY_BYTES, not JSON, not {"instances": [...], "parameters": {...}}, or
an instance the contract refuses (contract/prediction.py); each refusal names the field and
what is valid. The endpoint itself must answer: READY, a model deployed, not private.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from contract import prediction
from controlplane.backends import errors
from controlplane.serving import predictions
from controlplane.serving.models import Deployment, Endpoint
from controlplane.serving.serializers import PredictSerializer

# A test request is a few prompts: far below what Django reads of a form (2.5 MB).
MAX_BODY_BYTES = 64 * 1024
# Longer than a probe's: a tester's request may generate many tokens on a cold replica.
TIMEOUT_S = 60.0
EXAMPLE = {"instances": [{"prompt": "def add(a, b):", "max_tokens": 16}]}


class Refused(ValueError):
    """Nothing was sent (or nothing came back); the message says why, naming the field."""


@dataclass(frozen=True)
class Answer:
    predictions: list[Any]
    deployed_model_id: str
    latency_ms: float  # the round trip through the backend, as this server timed it

    @property
    def shown(self) -> str:
        return json.dumps({"predictions": self.predictions,
                           "deployed_model_id": self.deployed_model_id}, indent=2)


def example(endpoint: Endpoint) -> str:
    """What the tester's box starts with: the endpoint's probe request, or an example."""
    return json.dumps(endpoint.probe_payload or EXAMPLE, indent=2)


def read(text: str) -> tuple[list[Any], Any]:
    """(instances, parameters) of a request typed into the tester, or Refused."""
    size = len(text.encode())
    if size > MAX_BODY_BYTES:
        raise Refused(f"request: {size:,} bytes; a test request is at most "
                      f"{MAX_BODY_BYTES:,} bytes")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Refused(f"request: not JSON ({exc.msg} at line {exc.lineno}, column "
                      f"{exc.colno}); write {json.dumps(EXAMPLE)}") from None
    if not isinstance(body, dict):
        raise Refused(f"request: a JSON object with instances (and parameters), e.g. "
                      f"{json.dumps(EXAMPLE)}")
    checked = PredictSerializer(data=body)
    if not checked.is_valid():
        raise Refused("; ".join(f"{field}: {' '.join(map(str, problems))}"
                                for field, problems in checked.errors.items()))
    instances, parameters = checked.validated_data["instances"], \
        checked.validated_data.get("parameters")
    try:
        prediction.parse_instances(instances, parameters)
    except prediction.BadInstance as exc:
        raise Refused(str(exc)) from None
    return instances, parameters


def refusal(endpoint: Endpoint) -> str:
    """Why the endpoint cannot answer a prediction now, or ""."""
    if endpoint.state != Endpoint.State.READY:
        return f"the endpoint is {endpoint.state}, not READY"
    if not endpoint.deployments.filter(state=Deployment.State.DEPLOYED).exists():
        return "no model is deployed to this endpoint: deploy one first"
    if endpoint.access == Endpoint.Access.PRIVATE:
        return ("a private endpoint answers only inside its allowlisted projects' VPCs: "
                "send the prediction from there")
    return ""


def send(endpoint: Endpoint, instances: list[Any], parameters: Any) -> Answer:
    """One prediction through the serving backend, timed; Refused with what went wrong."""
    if why := refusal(endpoint):
        raise Refused(why)
    started = time.monotonic()
    try:
        result = predictions.predict(endpoint, instances, parameters, timeout_s=TIMEOUT_S)
    except (predictions.BadInstance, predictions.MixedRuntimes) as exc:
        raise Refused(str(exc)) from None
    except errors.BackendError as exc:
        raise Refused(f"the endpoint did not answer: {exc}") from None
    return Answer(result.predictions, result.deployed_model_id,
                  (time.monotonic() - started) * 1000)
