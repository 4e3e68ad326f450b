"""The README's prediction request and answer (issue 33: "the README does not document the
request format") are what the predict route and the model server read and write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contract import prediction
from controlplane.serving.serializers import PredictSerializer

README = Path(__file__).resolve().parents[2] / "README.md"


def examples() -> tuple[dict, dict]:
    text = README.read_text()
    section = text[text.index("### Predictions\n"):]
    section = section[:section.index("\n### ", 1)]
    request, answer = (json.loads(block) for block in
                       re.findall(r"```json\n(.*?)```", section, re.DOTALL))
    return request, answer


def test_the_readmes_request_is_read_as_it_says() -> None:
    request, _ = examples()
    assert PredictSerializer(data=request).is_valid()
    first, second = prediction.parse_instances(request["instances"], request["parameters"])
    assert (first.prompt, first.max_tokens, first.temperature) == (b"def fib(n):", 16, 0.0)
    assert (second.max_tokens, second.temperature, second.top_p, second.seed, second.stop) \
        == (32, 0.8, 0.95, 7, (b"\n\n",))


def test_the_readmes_answer_is_the_servers_shape() -> None:
    _, answer = examples()
    served = prediction.prediction(list(b"\n    if n < 2:   ..."), text_end=13)
    assert set(answer) == {"predictions", "deployed_model_id"}
    assert all(set(p) == set(served) for p in answer["predictions"])


@pytest.mark.parametrize(("change", "named"), [
    ({"max_tokens": 513}, "max_tokens: an integer from 1 to 512"),
    ({"temperature": 10.5}, "temperature: a number from 0 (greedy) to 10"),
    ({"top_p": 0}, "top_p: a number over 0"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop: a string or a list of up to 4"),
    ({"prompt": "x" * 8193}, "prompt: over 8192 bytes"),
])
def test_the_readmes_limits_are_the_contracts(change: dict, named: str) -> None:
    request, _ = examples()
    with pytest.raises(prediction.BadInstance, match=re.escape(f"instances[1].{named}")):
        prediction.parse_instances([request["instances"][0],
                                    {**request["instances"][1], **change}],
                                   request["parameters"])
