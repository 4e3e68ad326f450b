"""The generated repository served by a real Triton server (the one PyTriton bundles), started
as Vertex starts Triton's image for a triton entry (the generation model on the predict route):
one request is a whole generation whose greedy bytes are the eager server's, its logits model
(reached as Vertex clients reach another model, by Triton's redirect header) answers as the
eager model does, alone and among concurrent requests (which its dynamic batcher may serve
together)."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from config.ports import reserve_port
from contract import prediction
from tests.trainers import triton_env
from tests.trainers.test_triton_repo import export_model
from trainers.serving import generate, loader

# Runs in .venv/triton (`make envs`; tests/trainers/triton_env.py builds it when missing).
pytestmark = pytest.mark.environment

HEALTH_ROUTE = "/v2/health/ready"  # triton_local: the routes given as AIP_*_ROUTE
PREDICT_ROUTE = "/v2/models/gpt_generate/infer"
# Vertex's Triton passes a request to another route of its own HTTP API when told so.
LOGITS = {"X-Vertex-Ai-Triton-Redirect": "v2/models/gpt/infer"}


def _request(port: int, method: str, path: str, body: dict | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=json.dumps(body) if body else None,
                           headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}
    finally:
        connection.close()


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The eager answers in this process on one torch thread: on a machine the suite keeps
    busy, two threads spinning for two shared CPUs made a 64-byte generation 15-20 s instead
    of under one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("triton-serve")
    model = export_model(base / "model", seed=5)
    triton_env.run("-m", "trainers.serving.triton_package", str(model), str(base / "repo"))
    port = reserve_port()
    log = open(base / "server.log", "w")  # noqa: SIM115 (closed after the server)
    server = subprocess.Popen(
        [str(triton_env.python()), "-m", "trainers.serving.triton_local", str(base / "repo"),
         "--port", str(port), "--vertex-ai-default-model=gpt_generate"],
        cwd=triton_env.ROOT, stdout=log, stderr=subprocess.STDOUT)
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
        "data": tokens.flatten().tolist()}]}, LOGITS)
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
        "name": "tokens", "shape": [1, 3], "datatype": "FP32", "data": [1.0, 2.0, 3.0]}]},
        LOGITS)
    assert status == 400
    assert "tokens" in answer["error"] and "INT64" in answer["error"]
    # The generation model names the instance's field, as the product's server does.
    status, answer = _request(port, "POST", PREDICT_ROUTE, _generation([
        {"prompt": "a"}, {"prompt": "b", "max_tokens": 0}]))
    assert status == 400 and "instance[1].max_tokens" in answer["error"], answer


def _generation(instances: list) -> dict:
    return {"inputs": [{"name": "instance", "datatype": "BYTES", "shape": [len(instances), 1],
                        "data": [json.dumps(i) for i in instances]}]}


def _generate(port: int, instances: list) -> list[dict]:
    status, answer = _request(port, "POST", PREDICT_ROUTE, _generation(instances))
    assert status == 200, answer
    outputs = {o["name"]: o["data"] for o in answer["outputs"]}
    return [{"text": text, "tokens": tokens}
            for text, tokens in zip(outputs["text_output"], outputs["tokens"], strict=True)]


# Prompts of different lengths in one request (a padded prefill), one that runs past the
# 64-byte window (the eager server slides it), a stop sequence, a single byte.
INSTANCES = [{"prompt": "def ", "max_tokens": 64},
             {"prompt": "import os\n" * 6, "max_tokens": 64},
             {"prompt": "def ", "max_tokens": 64, "stop": "%%%"},
             {"prompt": "x", "max_tokens": 1}]


def test_one_request_is_a_whole_generation_equal_to_eager_greedy(served) -> None:
    port, model = served
    want = generate.generate(model, prediction.parse_instances(INSTANCES, None))
    assert _generate(port, INSTANCES) == want
    assert [w["tokens"] for w in want] == [64, 64, 5, 1] and "%%%" not in want[2]["text"]


def test_sampling_repeats_with_a_seed_and_a_tiny_nucleus_is_greedy(served) -> None:
    port, model = served
    sampled = [{"prompt": "def ", "max_tokens": 24, "temperature": 1.5, "seed": seed}
               for seed in (1, 1, 2)]
    one, again, other = _generate(port, sampled)
    assert one == again and one["tokens"] == 24 and one != other
    # top_p that keeps only the likeliest byte draws the greedy one whatever the seed.
    nucleus = [{**INSTANCES[0], "temperature": 1.0, "top_p": 1e-6, "seed": 9}]
    assert _generate(port, nucleus) == generate.generate(
        model, prediction.parse_instances(INSTANCES[:1], None))


def test_concurrent_generations_each_get_their_own_answer(served) -> None:
    port, model = served
    prompts = [[{"prompt": f"{'ab' * n}", "max_tokens": 8 + n}] for n in range(1, 9)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda p: _generate(port, p), prompts))
    for instances, got in zip(prompts, answers, strict=True):
        assert got == generate.generate(model, prediction.parse_instances(instances, None))

