"""Both sides of the prediction contract read it alike: the eager server's instance parser
(trainers/serving/generate.py) takes and refuses what the contract's does, with the same
values, and the Triton repositories the trainers generate declare the contract's tensors."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from contract import prediction
from trainers.serving import generate, triton_repo

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


def outcome(parse: Any, refusal: type[Exception], instances: Any, parameters: Any) -> Any:
    try:
        parsed = parse(instances, parameters)
    except refusal:
        return "refused"
    return [(i.prompt, i.max_tokens, i.temperature, i.seed) for i in parsed]


@pytest.mark.parametrize(("instances", "parameters"), REQUESTS)
def test_the_eager_server_reads_instances_as_the_contract_does(instances: Any,
                                                               parameters: Any) -> None:
    assert outcome(generate.parse_instances, generate.BadInstance, instances, parameters) == \
        outcome(prediction.parse_instances, prediction.BadInstance, instances, parameters)


def test_the_limits_are_the_contracts() -> None:
    assert (generate.MAX_PROMPT_BYTES, generate.MAX_TOKENS_LIMIT, generate.DEFAULT_MAX_TOKENS,
            generate.EMPTY_PROMPT) == (prediction.MAX_PROMPT_BYTES, prediction.MAX_TOKENS_LIMIT,
                                       prediction.DEFAULT_MAX_TOKENS, prediction.EMPTY_PROMPT)


def test_the_generated_repositories_declare_the_contracts_tensors() -> None:
    batching = triton_repo.Batching()
    config = triton_repo.config_text("gpt", 256, batching)
    assert batching.max_batch_size == prediction.MAX_BATCH
    assert f"max_batch_size: {prediction.MAX_BATCH}" in config
    assert f'name: "{prediction.INPUT_NAME}" data_type: TYPE_{prediction.INPUT_DATATYPE}' in config
    assert f'name: "{prediction.OUTPUT_NAME}" data_type: TYPE_{prediction.OUTPUT_DATATYPE}' \
        in config
    # The Python backend's model file is loaded without the project: its own constants.
    source = (ROOT / "trainers/serving/triton_python_model.py").read_text()
    names = {t.id: n.value.value for n in ast.parse(source).body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}
    assert (names["INPUT_NAME"], names["OUTPUT_NAME"]) == (prediction.INPUT_NAME,
                                                           prediction.OUTPUT_NAME)
