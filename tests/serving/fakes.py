"""An in-memory ServingBackend: scripts Vertex's answers for the serving logic's unit tests.
The emulator tests (test_emulator.py) and tests/integration/test_serving.py use the real
client libraries."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from controlplane.backends import errors
from controlplane.backends.images_base import (
    ArtifactImage,
    ImageRegistry,
    ImageTags,
    Repository,
    parse_artifact_image,
)
from controlplane.backends.serving_base import (
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
from controlplane.serving import options


class FakeServing(ServingBackend):
    def __init__(self) -> None:
        self.project = "fake-project"
        self.region = "us-central1"
        self.models: dict[str, dict[str, Any]] = {}
        self.endpoints: dict[str, RemoteEndpoint] = {}
        self.access: dict[str, EndpointAccess] = {}
        self.predicted_at: list[str] = []  # the dedicated DNS each predict went to ("" shared)
        self.operations: dict[str, Operation] = {}
        self.calls: list[tuple[str, Any]] = []
        self.hold_operations = False  # deploys and undeploys stay running until finish_all()
        self.predict_error: Exception | None = None
        self.raw_bodies: list[dict[str, Any]] = []  # every rawPredict body, parsed
        self.pending: dict[str, Any] = {}
        self._ids = itertools.count(1)

    def _op(self, done: bool = True, error: str = "") -> Operation:
        op = Operation(f"{self.parent}/operations/{next(self._ids)}", done, 9 if error else 0,
                       error)
        self.operations[op.name] = op
        return op

    def upload_model(self, model_id: str, display_name: str, artifact_uri: str,
                     container: Container, labels: dict[str, str]) -> Operation:
        self.calls.append(("upload", model_id))
        self.models[self.model_name(model_id)] = {"artifact_uri": artifact_uri,
                                                  "container": container, "labels": labels}
        return self._op()

    def model_exists(self, name: str) -> bool:
        return name in self.models

    def create_endpoint(self, endpoint_id: str, display_name: str, labels: dict[str, str],
                        access: EndpointAccess | None = None) -> Operation:
        self.calls.append(("create_endpoint", endpoint_id))
        if not display_name:
            raise errors.InvalidJobSpec("endpoint.display_name is required")
        name = self.endpoint_name(endpoint_id)
        access = access or EndpointAccess()
        self.endpoints.setdefault(name, RemoteEndpoint(
            name, display_name, labels, (), {},
            dedicated_dns=f"{endpoint_id}.dedicated.test" if access.dedicated else "",
            service_attachment=f"sa/{endpoint_id}" if access.psc_project_allowlist else ""))
        self.access[name] = access
        return self._op()

    def get_endpoint(self, name: str) -> RemoteEndpoint:
        if name not in self.endpoints:
            raise errors.NotFound(name)
        return self.endpoints[name]

    def delete_endpoint(self, name: str) -> Operation:
        self.calls.append(("delete_endpoint", name))
        self.endpoints.pop(name, None)
        return self._op()

    def deploy_model(self, endpoint: str, spec: DeploySpec,
                     traffic_split: dict[str, int]) -> Operation:
        self.calls.append(("deploy", (spec, dict(traffic_split))))
        op = self._op(done=not self.hold_operations)

        def land() -> None:
            current = self.endpoints[endpoint]
            split = {(spec.deployed_model_id if k == "0" else k): v
                     for k, v in traffic_split.items() if v}
            deployed = RemoteDeployedModel(spec.deployed_model_id, spec.model_name,
                                           spec.min_replicas, spec.max_replicas,
                                           spec.min_replicas)
            self.endpoints[endpoint] = replace(
                current, deployed_models=(*current.deployed_models, deployed),
                traffic_split=split)

        self._finish_or_hold(op, land)
        return op

    def undeploy_model(self, endpoint: str, deployed_model_id: str,
                       traffic_split: dict[str, int]) -> Operation:
        self.calls.append(("undeploy", (deployed_model_id, dict(traffic_split))))
        op = self._op(done=not self.hold_operations)

        def leave() -> None:
            current = self.endpoints[endpoint]
            self.endpoints[endpoint] = replace(
                current,
                deployed_models=tuple(d for d in current.deployed_models
                                      if d.id != deployed_model_id),
                traffic_split={k: v for k, v in traffic_split.items() if v})

        self._finish_or_hold(op, leave)
        return op

    def _finish_or_hold(self, op: Operation, effect: Any) -> None:
        if self.hold_operations:
            self.pending[op.name] = effect
        else:
            effect()

    def finish_all(self, error: str = "") -> None:
        for name, effect in list(self.pending.items()):
            if not error:
                effect()
            self.operations[name] = replace(self.operations[name], done=True,
                                            error_code=9 if error else 0, error_message=error)
            del self.pending[name]

    def set_autoscaling(self, endpoint: str, spec: DeploySpec) -> Operation:
        self.calls.append(("mutate", spec))
        return self._op()

    def get_operation(self, name: str) -> Operation:
        return self.operations[name]

    def predict(self, endpoint: str, instances: list[Any], parameters: Any = None,
                timeout_s: float | None = None, dedicated_dns: str = "") -> PredictResult:
        self.calls.append(("predict", endpoint))
        self.predicted_at.append(dedicated_dns)
        if self.predict_error is not None:
            raise self.predict_error
        deployed = self.endpoints[endpoint].deployed_models
        return PredictResult([{"text": "x", "tokens": 1} for _ in instances],
                             deployed[0].id if deployed else "")


    def raw_predict(self, endpoint: str, body: bytes, content_type: str = "application/json",
                    timeout_s: float | None = None,
                    dedicated_dns: str = "") -> RawPredictResult:
        """A stand-in for Triton serving triton_repo's model over a 256-byte vocabulary:
        the logits at each position favour the byte after that position's token, so a client
        reading a padded position instead of a prompt's last one gets a different answer."""
        self.calls.append(("raw_predict", endpoint))
        self.predicted_at.append(dedicated_dns)
        if self.predict_error is not None:
            raise self.predict_error
        request = json.loads(body)
        self.raw_bodies.append(request)
        deployed = self.endpoints[endpoint].deployed_models
        served_by = deployed[0].id if deployed else ""
        if request["inputs"][0]["name"] == "instance":
            return RawPredictResult(self._generation(request), "application/json", served_by)
        tokens = request["inputs"][0]
        rows, width = tokens["shape"]
        vocab = 256
        logits = []
        for token in tokens["data"]:
            row = [0.0] * vocab
            row[(token + 1) % vocab] = 1.0
            logits += row
        answer = {"model_name": "gpt", "model_version": "1", "outputs": [
            {"name": "logits", "datatype": "FP32", "shape": [rows, width, vocab],
             "data": logits}]}
        return RawPredictResult(json.dumps(answer).encode(), "application/json", served_by)

    @staticmethod
    def _generation(request: dict[str, Any]) -> bytes:
        """triton_repo's generation model as the logits above would drive it: each row's
        max_tokens bytes, each the byte after the one before."""
        texts, counts = [], []
        for row in request["inputs"][0]["data"]:
            instance = json.loads(row)
            last, out = instance["prompt"].encode()[-1], []
            for _ in range(instance["max_tokens"]):
                last = (last + 1) % 256
                out.append(last)
            texts.append(bytes(out).decode("utf-8", "replace"))
            counts.append(len(out))
        return json.dumps({"model_name": "gpt_generate", "model_version": "1", "outputs": [
            {"name": "text_output", "datatype": "BYTES", "shape": [len(texts), 1],
             "data": texts},
            {"name": "tokens", "datatype": "INT32", "shape": [len(texts), 1],
             "data": counts}]}).encode()


    def chat_completions(self, endpoint: str, body: bytes, timeout_s: float | None = None,
                         dedicated_dns: str = "") -> Iterator[bytes]:
        """The request's last message back as the assistant's answer: one JSON object, or
        server-sent events (the reply in two chunks, then [DONE]) when it asks to stream."""
        self.calls.append(("chat_completions", endpoint))
        self.predicted_at.append(dedicated_dns)
        if self.predict_error is not None:
            raise self.predict_error
        request = json.loads(body)
        reply = str(request["messages"][-1].get("content", ""))
        if not request.get("stream"):
            return iter([json.dumps({
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                "model": "fake", "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply}}]}).encode()])
        half = len(reply) // 2
        events = [{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                   "model": "fake", "choices": [{"index": 0, "delta": {"content": part},
                                                 "finish_reason": None}]}
                  for part in (reply[:half], reply[half:])]
        return iter([*(f"data: {json.dumps(e)}\n\n".encode() for e in events),
                     b"data: [DONE]\n\n"])


class FakeImages(ImageRegistry):
    """An in-memory Artifact Registry: the product's serving image, plus what a test pushes;
    `error` makes every read fail as an unreachable registry does."""

    def __init__(self) -> None:
        self.pushed: dict[str, list[str]] = {}
        self.labels: dict[str, dict[str, str]] = {}  # repository name -> its labels
        self.error: errors.BackendError | None = None
        self.push(options.serving_image())

    def push(self, uri: str, labels: dict[str, str] | None = None) -> None:
        image = parse_artifact_image(uri)
        assert image is not None, uri
        self.pushed.setdefault(image.host_path, []).append(image.tag)
        self.labels.setdefault(image.repository_name, dict(labels or {}))

    def repositories(self, project: str, location: str) -> list[Repository]:
        if self.error is not None:
            raise self.error
        prefix = f"projects/{project}/locations/{location}/repositories/"
        return [Repository(name, labels) for name, labels in sorted(self.labels.items())
                if name.startswith(prefix)]

    def images(self, repository: str) -> list[ImageTags]:
        host = Repository(repository, {}).host + "/"
        return [ImageTags(path, tuple(dict.fromkeys(reversed(tags))))
                for path, tags in sorted(self.pushed.items()) if path.startswith(host)]

    def image_tags(self, image: ArtifactImage) -> list[str] | None:
        if self.error is not None:
            raise self.error
        if not any(path.startswith(f"{image.location}-docker.pkg.dev/{image.project}/"
                                   f"{image.repository}/") for path in self.pushed):
            raise errors.NotFound(f"ListDockerImages: {image.repository_name} not found")
        tags = self.pushed.get(image.host_path)
        return None if tags is None else list(dict.fromkeys(reversed(tags)))  # newest first
