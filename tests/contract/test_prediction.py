"""The prediction schema: instances in their two forms with the request's parameters as
defaults, refusals that name the field, the answer's shape, and KServe v2 tensors for the
Triton path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contract import prediction
from contract.prediction import BadAnswer, BadInstance, Instance, parse_instances


def test_an_instance_is_a_prompt_or_an_object_with_the_parameters_as_defaults() -> None:
    assert parse_instances(["ab", {"prompt": "c", "max_tokens": 3.0, "seed": 7.0}],
                           {"max_tokens": 2, "temperature": 0.5}) == [
        Instance(b"ab", 2, 0.5, None), Instance(b"c", 3, 0.5, 7)]
    assert parse_instances([""], None) == [Instance(prediction.EMPTY_PROMPT,
                                                    prediction.DEFAULT_MAX_TOKENS, 0.0, None)]
    assert parse_instances([{"prompt": "é"}], {})[0].prompt == "é".encode()
    biggest = {"prompt": "x" * prediction.MAX_PROMPT_BYTES,
               "max_tokens": prediction.MAX_TOKENS_LIMIT,
               "temperature": prediction.MAX_TEMPERATURE}
    assert parse_instances([biggest], None)[0].max_tokens == prediction.MAX_TOKENS_LIMIT


@pytest.mark.parametrize(("instances", "parameters", "message"), [
    ([], None, "instances: a non-empty list"),
    ({"prompt": "a"}, None, "instances: a non-empty list"),
    (["a"], [1], "parameters: an object"),
    ([3], None, "instances[0]: a string or an object with 'prompt'"),
    ([{"prompt": "a", "top_k": 3}], None, "instances[0]: unknown keys ['top_k']"),
    ([{"prompt": 3}], None, "instances[0].prompt: a string"),
    (["x" * 8193], None, "instances[0].prompt: over 8192 bytes"),
    (["a", {"prompt": "b", "max_tokens": 0}], None,
     "instances[1].max_tokens: an integer from 1 to 512"),
    (["a"], {"max_tokens": 513}, "instances[0].max_tokens: an integer from 1 to 512"),
    (["a"], {"max_tokens": 2.5}, "instances[0].max_tokens: an integer from 1 to 512"),
    (["a"], {"max_tokens": True}, "instances[0].max_tokens: an integer from 1 to 512"),
    (["a"], {"temperature": 10.5}, "instances[0].temperature: a number from 0 (greedy) to 10"),
    (["a"], {"temperature": -0.1}, "instances[0].temperature: a number from 0 (greedy) to 10"),
    ([{"prompt": "a", "seed": 1.5}], None, "instances[0].seed: an integer"),
    ([{"prompt": "a", "seed": "7"}], None, "instances[0].seed: an integer"),
])
def test_an_instance_that_cannot_be_answered_names_the_field(instances: Any, parameters: Any,
                                                             message: str) -> None:
    with pytest.raises(BadInstance) as refused:
        parse_instances(instances, parameters)
    assert str(refused.value) == message


@pytest.mark.parametrize(("key", "value"), [
    ("max_tokens", float("inf")), ("max_tokens", float("nan")), ("max_tokens", 10**400),
    ("temperature", float("nan")), ("temperature", 10**400), ("seed", float("inf")),
])
def test_numbers_out_of_any_range_are_refused_not_a_crash(key: str, value: Any) -> None:
    # Python's json module reads NaN, Infinity and integers of any size.
    with pytest.raises(BadInstance, match=rf"instances\[0\]\.{key}: "):
        parse_instances([{"prompt": "a", key: value}], None)
    assert parse_instances([{"prompt": "a", "seed": 10**400}], None)[0].seed == 10**400


def test_a_seed_repeats_the_draws() -> None:
    [seeded] = parse_instances([{"prompt": "a", "temperature": 1.0, "seed": 3}], None)
    one, two = seeded.generator(), seeded.generator()
    assert [one.random() for _ in range(5)] == [two.random() for _ in range(5)]


def test_a_prediction_is_the_text_and_the_bytes_generated() -> None:
    assert prediction.prediction(list(b"hi")) == {"text": "hi", "tokens": 2}
    assert prediction.prediction([0xC3]) == {"text": "\ufffd", "tokens": 1}  # cut mid-character
    assert prediction.prediction([]) == {"text": "", "tokens": 0}


def test_a_kserve_request_pads_every_row_to_the_longest() -> None:
    body = json.loads(prediction.request_body([[5, 6, 7], [8]]))
    assert body == {"inputs": [{"name": "tokens", "datatype": "INT64", "shape": [2, 3],
                                "data": [5, 6, 7, 8, 0, 0]}],
                    "outputs": [{"name": "logits"}]}
    with pytest.raises(ValueError, match="1 to 32 rows"):
        prediction.request_body([[1]] * (prediction.MAX_BATCH + 1))
    with pytest.raises(ValueError, match="1 to 32 rows"):
        prediction.request_body([])


def answer(rows: int, width: int, vocab: int, data: list[float] | None = None) -> bytes:
    values = data if data is not None else [float(i) for i in range(rows * width * vocab)]
    return json.dumps({"outputs": [{"name": "other", "shape": [1], "data": [0]},
                                   {"name": "logits", "datatype": "FP32",
                                    "shape": [rows, width, vocab], "data": values}]}).encode()


def test_the_logits_at_each_rows_last_real_position_are_read() -> None:
    # Row 0 is 3 long, row 1 only 1 (padded): [row][position][vocab of 2].
    assert prediction.last_logits(answer(2, 3, 2), [3, 1]) == [[4.0, 5.0], [6.0, 7.0]]


@pytest.mark.parametrize("body", [
    b"not json", b"{}", json.dumps({"outputs": [{"name": "other"}]}).encode(),
    answer(1, 3, 2), answer(2, 2, 2), answer(2, 3, 2, data=[0.0] * 11),
    json.dumps({"outputs": [{"name": "logits", "shape": [2, 3], "data": []}]}).encode(),
])
def test_an_answer_that_is_not_the_declared_logits_is_refused(body: bytes) -> None:
    with pytest.raises(BadAnswer):
        prediction.last_logits(body, [3, 1])
