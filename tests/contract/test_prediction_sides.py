"""Both sides of the prediction contract read it alike: the model server (trainers/serving/)
takes and refuses over HTTP what the contract's parser does, with the same values and
messages, and the Triton repositories the trainers generate declare the contract's tensors."""

from __future__ import annotations

import ast
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contract import prediction
from controlplane.serving import triton_kserve
from trainers.config import ModelConfig
from trainers.serving import generate, triton_repo
from trainers.serving.batcher import Batcher
from trainers.serving.http import PredictionServer
from trainers.torch.model import GPT

pytestmark = pytest.mark.trainers

ROOT = Path(__file__).resolve().parents[2]
REQUESTS: list[tuple[Any, Any]] = [
    (["ab", {"prompt": "c", "max_tokens": 3.0, "seed": 7.0}], {"max_tokens": 2}),
    ([{"prompt": "", "temperature": 0.7, "seed": 1}], None),
    (["x"], {"temperature": 10}),
    ([], None), ({"prompt": "a"}, None), (["a"], [1]), ([3], None),
    ([{"prompt": "a", "top_k": 3}], None), ([{"prompt": 3}], None), (["x" * 8193], None),
    ([{"prompt": "a", "max_tokens": 0}], None), (["a"], {"max_tokens": 513}),
    (["a"], {"max_tokens": 2.5}), (["a"], {"max_tokens": True}),
    (["a"], {"temperature": 10.5}), (["a"], {"temperature": -1}),
    ([{"prompt": "a", "seed": 1.5}], None), ([{"prompt": "a", "seed": "7"}], None),
]


def outcome(instances: Any, parameters: Any) -> Any:
    """What the contract makes of a request: the parsed instances' values, or its refusal."""
    try:
        parsed = prediction.parse_instances(instances, parameters)
    except prediction.BadInstance as exc:
        return ("refused", str(exc))
    return [[list(i.prompt), i.max_tokens, i.temperature, i.seed] for i in parsed]


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    """The model server's HTTP side (trainers/serving/http.py) with a batcher that answers
    each instance with its own parsed values, so a test sees what the server read."""

    def echo(items: list[prediction.Instance], done: Any) -> None:
        for position, item in enumerate(items):
            done(position, [list(item.prompt), item.max_tokens, item.temperature, item.seed])

    batcher: Batcher[prediction.Instance] = Batcher(echo)
    server = PredictionServer(("127.0.0.1", 0), batcher, "/health", "/predict", {})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/predict"
    finally:
        server.shutdown()
        batcher.close()


@pytest.mark.parametrize(("instances", "parameters"), REQUESTS)
def test_the_model_server_reads_instances_as_the_contract_does(
        echo_server: str, instances: Any, parameters: Any) -> None:
    body = json.dumps({"instances": instances, "parameters": parameters}).encode()
    request = urllib.request.Request(echo_server, data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: Any = json.loads(response.read())["predictions"]
    except urllib.error.HTTPError as exc:
        assert exc.code == 400
        answer = ("refused", json.loads(exc.read())["error"])
    assert answer == outcome(instances, parameters)


def test_the_trainers_keep_no_parser_of_their_own() -> None:
    """One reading of an instance: the serving code takes the contract's, and defines none."""
    defined = {node.name for path in (ROOT / "trainers").rglob("*.py")
               if path.name != "triton_python_model.py"
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert not defined & {"parse_instances", "BadInstance", "Instance", "prediction"}
    assert generate.Instance is prediction.Instance


def test_the_generated_repositories_declare_the_contracts_tensors() -> None:
    batching = triton_repo.Batching()
    config = triton_repo.config_text("gpt", 256, batching)
    assert batching.max_batch_size == prediction.MAX_BATCH
    assert f"max_batch_size: {prediction.MAX_BATCH}" in config
    assert f'name: "{prediction.INPUT_NAME}" data_type: TYPE_{prediction.INPUT_DATATYPE}' in config
    assert f'name: "{prediction.OUTPUT_NAME}" data_type: TYPE_{prediction.OUTPUT_DATATYPE}' \
        in config
    # The generation model (run inside Triton, without the project) reads instances with a
    # copy of the contract's own module, and declares the tensors the control plane sends.
    assert triton_repo.GENERATE_FILES["prediction.py"] == prediction.__name__
    generate_config = triton_repo.generate_config_text("gpt", GPT(ModelConfig(), seed=0),
                                                       batching)
    for name in (triton_kserve.GENERATE_INPUT, triton_kserve.GENERATE_TEXT,
                 triton_kserve.GENERATE_TOKENS):
        assert f'name: "{name}"' in generate_config
