"""Predictions to a triton deployment: a triton model generating inside Triton is sent one
rawPredict a generation (its instances as the contract's JSON) and its answer proxied; a model
answering logits (a tensorrt engine, a triton entry registered before) gets the KServe v2 body
built for triton_repo's logits model, the bytes read back from its logits (greedy, or drawn at
a temperature, repeatably with a seed); the API and the prober go through rawPredict."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.serving import lifecycle, predictions, prober, registry, triton_kserve
from controlplane.serving.models import Endpoint, ModelEntry
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry


def _deploy(endpoint: Endpoint, entry: ModelEntry, member: Any, traffic: int = 100) -> None:
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4", traffic_percent=traffic)
    lifecycle.send_deploy(deployment.pk)


@pytest.fixture
def triton_endpoint(fake: FakeServing, queued: list, trained_job: Job, member: Any) -> Endpoint:
    entry = ready_entry(trained_job, member)
    # The packaging job is not what is tested here: the entry is a triton one once uploaded.
    ModelEntry.objects.filter(pk=entry.pk).update(runtime=ModelEntry.Runtime.TRITON)
    entry.refresh_from_db()
    endpoint = ready_endpoint(trained_job.team, member)
    _deploy(endpoint, entry, member)
    return endpoint


@pytest.fixture
def generating_endpoint(fake: FakeServing, queued: list, trained_job: Job,
                        member: Any) -> Endpoint:
    """A triton entry as registered now: its container serves the generation model."""
    entry = ready_entry(trained_job, member)
    ModelEntry.objects.filter(pk=entry.pk).update(runtime=ModelEntry.Runtime.TRITON,
                                                  args=registry.TRITON_ARGS)
    entry.refresh_from_db()
    assert registry.container_for(entry).predict_route == "/v2/models/gpt_generate/infer"
    endpoint = ready_endpoint(trained_job.team, member)
    _deploy(endpoint, entry, member)
    return endpoint


def test_a_generation_inside_triton_is_one_raw_predict_proxied(
        generating_endpoint: Endpoint, fake: FakeServing) -> None:
    result = predictions.predict(
        generating_endpoint,
        [{"prompt": "ab", "max_tokens": 24, "stop": ["zz", "\n"], "seed": 3,
          "temperature": 0.5, "top_p": 0.9}, "x"], {"max_tokens": 2})
    assert [c[0] for c in fake.calls if "predict" in c[0]] == ["raw_predict"]
    [body] = fake.raw_bodies
    assert body["inputs"][0]["name"] == "instance" and body["inputs"][0]["shape"] == [2, 1]
    # Each row the contract's instance again, the parameters' defaults filled in.
    assert [json.loads(row) for row in body["inputs"][0]["data"]] == [
        {"prompt": "ab", "max_tokens": 24, "temperature": 0.5, "top_p": 0.9, "seed": 3,
         "stop": ["zz", "\n"]},
        {"prompt": "x", "max_tokens": 2, "temperature": 0.0, "top_p": 1.0}]
    assert result.predictions[0]["tokens"] == 24
    assert result.predictions[0]["text"] == "cdefghijklmnopqrstuvwxyz"
    assert result.predictions[1] == {"text": "yz", "tokens": 2}
    assert result.deployed_model_id == str(generating_endpoint.deployments.get().pk)
    # Over MAX_BATCH instances: one request per MAX_BATCH.
    fake.raw_bodies.clear()
    assert len(predictions.predict(generating_endpoint, ["a"] * 40).predictions) == 40
    assert [b["inputs"][0]["shape"][0] for b in fake.raw_bodies] == [32, 8]


def test_a_generation_answer_without_its_outputs_is_a_backend_error() -> None:
    with pytest.raises(triton_kserve.BadAnswer, match="'text_output' and 'tokens'"):
        triton_kserve.generations(b'{"outputs": [{"name": "logits"}]}', 1)
    with pytest.raises(triton_kserve.BadAnswer, match="for each of the 2 rows"):
        triton_kserve.generations(json.dumps({"outputs": [
            {"name": "text_output", "data": ["a"]}, {"name": "tokens", "data": [1]}]})
            .encode(), 2)


def test_triton_models_generating_and_answering_logits_do_not_share_traffic(
        generating_endpoint: Endpoint, fake: FakeServing, trained_job: Job,
        member: Any) -> None:
    older = ready_entry(trained_job, member, step=30)
    ModelEntry.objects.filter(pk=older.pk).update(runtime=ModelEntry.Runtime.TRITON,
                                                  args=registry.TENSORRT_ARGS)
    _deploy(generating_endpoint, older, member, traffic=10)
    with pytest.raises(predictions.MixedRuntimes, match="gpt, gpt_generate"):
        predictions.predict(generating_endpoint, ["a"])
    assert not fake.raw_bodies


def test_the_body_is_kserve_v2_with_the_tensor_the_generated_config_declares() -> None:
    body = json.loads(triton_kserve.request_body([[100, 101, 102], [7]]))
    assert body == {
        "inputs": [{"name": "tokens", "datatype": "INT64", "shape": [2, 3],
                    "data": [100, 101, 102, 7, 0, 0]}],
        "outputs": [{"name": "logits"}],
    }


def test_the_greedy_byte_is_read_at_each_row_s_last_real_position() -> None:
    vocab = 4
    # Row 0 (length 2): position 1 favours 3. Row 1 (length 1): position 0 favours 2, its
    # padded position 1 would favour 0. Equal maxima pick the first, as torch.argmax does.
    data = [0, 1, 0, 0, 0, 0, 0, 9,
            1, 1, 5, 5, 9, 0, 0, 0]
    answer = json.dumps({"outputs": [{"name": "logits", "datatype": "FP32",
                                      "shape": [2, 2, vocab], "data": data}]}).encode()
    rows = triton_kserve.last_logits(answer, [2, 1])
    assert rows == [[0, 0, 0, 9], [1, 1, 5, 5]]
    assert [triton_kserve.choose(scores, 0.0, None) for scores in rows] == [3, 2]
    with pytest.raises(triton_kserve.BadAnswer, match="logits has shape"):
        triton_kserve.last_logits(answer, [2, 1, 1])
    with pytest.raises(triton_kserve.BadAnswer, match="no 'logits' output"):
        triton_kserve.last_logits(b'{"error": "no model"}', [1])


def test_a_temperature_draws_from_the_softmax_and_a_seed_repeats_the_draws() -> None:
    scores = [0.0, math.log(3.0), -50.0]  # softmax: 1/4, 3/4, ~0
    draws = random.Random(11)
    picked = [triton_kserve.choose(scores, 1.0, draws) for _ in range(4000)]
    assert 0.72 < picked.count(1) / 4000 < 0.78 and picked.count(2) == 0
    # A low temperature sharpens it to the greedy byte; temperature 0 is the greedy byte.
    assert {triton_kserve.choose(scores, 0.01, draws) for _ in range(200)} == {1}
    assert triton_kserve.choose(scores, 0.0, None) == 1
    [seeded] = triton_kserve.parse_instances([{"prompt": "a", "temperature": 0.9, "seed": 5}],
                                             None)
    one, two = seeded.generator(), seeded.generator()
    assert [triton_kserve.choose(scores, 0.9, one) for _ in range(50)] == \
        [triton_kserve.choose(scores, 0.9, two) for _ in range(50)]


@pytest.mark.parametrize(("instances", "parameters", "field"), [
    ([{"prompt": "a", "temperature": 10.5}], None, "instances[0].temperature"),
    ([{"prompt": "a", "temperature": 0.7, "seed": 1.5}], None, "instances[0].seed"),
    (["a", {"prompt": "b", "max_tokens": 0}], None, "instances[1].max_tokens"),
    (["a"], {"max_tokens": 513}, "instances[0].max_tokens"),
    ([{"prompt": 3}], None, "instances[0].prompt"),
    ([{"prompt": "a", "top_k": 3}], None, "instances[0]: unknown keys"),
    (["a"], [1], "parameters"),
])
def test_instances_triton_cannot_answer_name_the_field(instances: Any, parameters: Any,
                                                       field: str) -> None:
    with pytest.raises(triton_kserve.BadInstance, match=field.replace("[", r"\[")
                       .replace("]", r"\]")):
        triton_kserve.parse_instances(instances, parameters)


def test_a_triton_endpoint_generates_through_raw_predict(triton_endpoint: Endpoint,
                                                         fake: FakeServing) -> None:
    result = predictions.predict(triton_endpoint,
                                 [{"prompt": "ab", "max_tokens": 3}, "x"],
                                 {"max_tokens": 2})
    # The fake's model answers the byte after the last one: "ab" -> "cde", "x" -> "yz".
    assert result.predictions == [{"text": "cde", "tokens": 3}, {"text": "yz", "tokens": 2}]
    assert result.deployed_model_id == str(triton_endpoint.deployments.get().pk)
    assert [c[0] for c in fake.calls if "predict" in c[0]] == ["raw_predict"] * 3
    # One row per prompt still generating, right-padded to the longest.
    shapes = [b["inputs"][0]["shape"] for b in fake.raw_bodies]
    assert shapes == [[2, 2], [2, 3], [1, 4]]
    assert fake.raw_bodies[0]["inputs"][0]["data"] == [97, 98, 120, 0]


def test_more_prompts_than_triton_s_max_batch_go_in_several_requests(
        triton_endpoint: Endpoint, fake: FakeServing) -> None:
    result = predictions.predict(triton_endpoint, ["a"] * 40, {"max_tokens": 1})
    assert [p["text"] for p in result.predictions] == ["b"] * 40
    assert [b["inputs"][0]["shape"][0] for b in fake.raw_bodies] == [32, 8]


def test_the_api_and_the_prober_answer_a_triton_endpoint(triton_endpoint: Endpoint,
                                                         fake: FakeServing, member: Any) -> None:
    client = APIClient()
    client.force_authenticate(member)
    url = f"/api/v1/serving/endpoints/{triton_endpoint.pk}/predict/"
    response = client.post(url, {"instances": [{"prompt": "def ", "max_tokens": 2}]},
                           format="json")
    assert response.status_code == 200, response.content
    assert response.json()["predictions"] == [{"text": "!\"", "tokens": 2}]
    response = client.post(url, {"instances": [{"prompt": "a", "temperature": -1}]},
                           format="json")
    assert response.status_code == 400
    assert "instances[0].temperature" in response.json()["instances"][0]
    # Sampled: the same seed, the same answer.
    seeded = {"instances": [{"prompt": "a", "temperature": 1, "seed": 7, "max_tokens": 4}]}
    first = client.post(url, seeded, format="json")
    assert first.status_code == 200, first.content
    assert client.post(url, seeded, format="json").json() == first.json()
    assert first.json()["predictions"][0]["tokens"] == 4

    sample = prober.probe(triton_endpoint.pk)
    assert sample is not None and sample.ok, sample.error if sample else None
    # The default probe asks 8 bytes: eight rawPredicts, and no Predict.
    assert not [c for c in fake.calls if c[0] == "predict"]


def test_an_endpoint_splitting_traffic_between_triton_and_eager_is_refused(
        triton_endpoint: Endpoint, fake: FakeServing, trained_job: Job, member: Any) -> None:
    eager = ready_entry(trained_job, member, step=30)
    _deploy(triton_endpoint, eager, member, traffic=10)
    assert sorted(triton_endpoint.deployments.values_list("model_entry__runtime", flat=True)) \
        == ["eager", "triton"]
    with pytest.raises(predictions.MixedRuntimes, match="triton and eager"):
        predictions.predict(triton_endpoint, ["a"])
    sample = prober.probe(triton_endpoint.pk)
    assert sample is not None and not sample.ok and "triton and eager" in sample.error
