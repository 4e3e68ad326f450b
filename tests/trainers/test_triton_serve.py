"""The generated repository served by a real Triton server (the one PyTriton bundles), started
as Vertex starts Triton's image, answers KServe v2 inference as the eager model does, alone
and among concurrent requests (which its dynamic batcher may serve together)."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from tests.trainers import triton_env
from tests.trainers.test_triton_repo import export_model
from trainers.serving import loader

# Runs in .venv/triton (`make envs`; tests/trainers/triton_env.py builds it when missing).
pytestmark = pytest.mark.environment

HEALTH_ROUTE = "/v2/health/ready"  # triton_local: the routes given as AIP_*_ROUTE
PREDICT_ROUTE = "/v2/models/gpt/infer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=json.dumps(body) if body else None,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}
    finally:
        connection.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("triton-serve")
    model = export_model(base / "model", seed=5)
    triton_env.run("-m", "trainers.serving.triton_package", str(model), str(base / "repo"))
    port = _free_port()
    log = open(base / "server.log", "w")  # noqa: SIM115 (closed after the server)
    server = subprocess.Popen(
        [str(triton_env.python()), "-m", "trainers.serving.triton_local", str(base / "repo"),
         "--port", str(port)], cwd=triton_env.ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):  # up to a minute, polled every 0.1 s
            if server.poll() is not None:
                break
            try:
                if _request(port, "GET", HEALTH_ROUTE)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert server.poll() is None, (base / "server.log").read_text()[-3000:]
        yield port, loader.load(str(model)).model
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def _infer(port: int, tokens: torch.Tensor) -> torch.Tensor:
    status, answer = _request(port, "POST", PREDICT_ROUTE, {"inputs": [{
        "name": "tokens", "shape": list(tokens.shape), "datatype": "INT64",
        "data": tokens.flatten().tolist()}]})
    assert status == 200, answer
    (output,) = answer["outputs"]
    assert output["name"] == "logits" and output["datatype"] == "FP32"
    return torch.tensor(output["data"]).reshape(output["shape"])


@torch.inference_mode()
def test_triton_answers_as_eager(served) -> None:
    port, model = served
    generator = torch.Generator().manual_seed(1)
    for shape in ((1, 1), (2, 5), (3, model.config.block_size)):
        tokens = torch.randint(0, 256, shape, generator=generator)
        got = _infer(port, tokens)
        assert got.shape == (*shape, 256)
        torch.testing.assert_close(got, model.stage_forward(tokens), atol=1e-4, rtol=1e-4)


@torch.inference_mode()
def test_concurrent_requests_each_get_their_own_answer(served) -> None:
    port, model = served
    generator = torch.Generator().manual_seed(2)
    prompts = [torch.randint(0, 256, (1, 9), generator=generator) for _ in range(12)]
    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda t: _infer(port, t), prompts))
    for tokens, got in zip(prompts, answers, strict=True):
        torch.testing.assert_close(got, model.stage_forward(tokens), atol=1e-4, rtol=1e-4)


def test_a_malformed_request_is_refused(served) -> None:
    port, _ = served
    status, answer = _request(port, "POST", PREDICT_ROUTE, {"inputs": [{
        "name": "tokens", "shape": [1, 3], "datatype": "FP32", "data": [1.0, 2.0, 3.0]}]})
    assert status == 400
    assert "tokens" in answer["error"] and "INT64" in answer["error"]

