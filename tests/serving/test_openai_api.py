"""The model server's continuous batching and OpenAI-compatible API (trainers/serving/
batcher.py, http.py, openai_api.py), driven by the `openai` client as a vLLM user drives it."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future

import openai
import pytest

from contract.prediction import Instance
from trainers.config import ModelConfig
from trainers.serving.batcher import ContinuousBatcher
from trainers.serving.decoding import Decoder, Sequence
from trainers.serving.http import PredictionServer
from trainers.torch.model import GPT

pytestmark = pytest.mark.trainers

PROMPT = "def main():\n    "


def _model() -> GPT:
    return GPT(ModelConfig(block_size=64, n_layer=2, n_head=2, n_embd=32), seed=1).eval()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    batcher = ContinuousBatcher(Decoder(_model(), slots=4))
    server = PredictionServer(("127.0.0.1", 0), batcher, "/health", "/predict", {}, "tiny")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        batcher.close()


@pytest.fixture(scope="module")
def client(server: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)


def _predict(server: str, instance: dict) -> dict:
    request = urllib.request.Request(server + "/predict",
                                     data=json.dumps({"instances": [instance]}).encode())
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["predictions"][0]


def test_a_short_request_behind_a_long_one_joins_the_running_batch_and_finishes_first() -> None:
    batcher = ContinuousBatcher(Decoder(_model(), slots=4))
    finished: list[str] = []
    short: list[Future] = []

    def after_each_byte(sequence: Sequence) -> None:
        # The short request arrives once the long one is 5 bytes in (no clock involved).
        if len(sequence.generated) == 5:
            generation = batcher.start([Instance(b"# ", 3)])
            generation.future.add_done_callback(lambda _f: finished.append("short"))
            short.append(generation.future)

    try:
        long = batcher.start([Instance(b"class A:\n", 40)], on_token=after_each_byte)
        long.future.add_done_callback(lambda _f: finished.append("long"))
        [done] = long.future.result(30)
        assert short[0].result(30)[0].finish_reason == "length"
    finally:
        batcher.close()
    assert finished == ["short", "long"]
    assert done.answer()["tokens"] == 40
    # It joined at the next step: 1 + 40 steps for both, not 40 + 3 one after the other.
    assert batcher.stats.steps == 40 and batcher.stats.largest == 2 and batcher.stats.items == 2


def test_a_cancelled_request_leaves_the_batch_for_the_one_waiting_behind_it() -> None:
    """What the predict route does with a request that timed out: with one slot, the second
    request runs only once the first, which would never end, has left."""
    batcher = ContinuousBatcher(Decoder(_model(), slots=1))
    try:
        endless = batcher.submit([Instance(b"while True:\n", 10**9)])
        waiting = batcher.submit([Instance(b"# ", 3)])
        assert endless.cancel()
        assert waiting.result(60)[0]["tokens"] == 3
    finally:
        batcher.close()
    assert batcher.decoder.idle and batcher.decoder.cache.free == 1


def test_completions_answer_as_the_predict_route_does(server: str,
                                                      client: openai.OpenAI) -> None:
    predicted = _predict(server, {"prompt": PROMPT, "max_tokens": 24})
    completion = client.completions.create(model="tiny", prompt=PROMPT, max_tokens=24,
                                           temperature=0)
    assert completion.choices[0].text == predicted["text"]
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage.completion_tokens == 24
    assert completion.usage.prompt_tokens == len(PROMPT.encode())
    assert completion.model == "tiny" and completion.object == "text_completion"
    streamed = client.completions.create(model="tiny", prompt=PROMPT, max_tokens=24,
                                         temperature=0, stream=True)
    chunks = list(streamed)
    assert "".join(c.choices[0].text for c in chunks) == predicted["text"]
    assert len(chunks) > 2 and chunks[-1].choices[0].finish_reason == "length"
    assert [m.id for m in client.models.list()] == ["tiny"]


def test_stop_sequences_end_the_text_streamed_or_not(server: str,
                                                     client: openai.OpenAI) -> None:
    free = _predict(server, {"prompt": PROMPT, "max_tokens": 30})["text"]
    stop = free[12:14]  # the random model's text is ASCII: its bytes are its characters
    want = free[:free.index(stop)]
    assert stop.isascii() and want
    assert _predict(server, {"prompt": PROMPT, "max_tokens": 30, "stop": stop})["text"] == want
    completion = client.completions.create(model="tiny", prompt=PROMPT, max_tokens=30,
                                           temperature=0, stop=[stop])
    assert completion.choices[0].text == want and completion.choices[0].finish_reason == "stop"
    chunks = list(client.completions.create(model="tiny", prompt=PROMPT, max_tokens=30,
                                            temperature=0, stop=stop, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == want
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_chat_completions_streamed_and_not(server: str, client: openai.OpenAI) -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    whole = client.chat.completions.create(model="tiny", messages=messages, max_tokens=16,
                                           temperature=0, seed=1)
    reply = whole.choices[0].message
    assert reply.role == "assistant" and whole.choices[0].finish_reason == "length"
    # The byte-level model's layout of a chat: the predict route answers it alike.
    prompt = "system: be brief\nuser: hi\nassistant: "
    assert reply.content == _predict(server, {"prompt": prompt, "max_tokens": 16})["text"]
    chunks = list(client.chat.completions.create(
        model="tiny", messages=messages, max_tokens=16, temperature=0, stream=True,
        stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == reply.content
    assert chunks[-1].usage.completion_tokens == 16


def test_sampling_repeats_with_a_seed(client: openai.OpenAI) -> None:
    def draw() -> str:
        return client.completions.create(model="tiny", prompt="x", max_tokens=16,
                                         temperature=1.2, top_p=0.9, seed=11).choices[0].text

    assert draw() == draw()


@pytest.mark.parametrize(("arguments", "param", "message"), [
    ({"max_tokens": 513}, "max_tokens", "max_tokens: an integer from 1 to 512"),
    ({"temperature": 11}, "temperature", "temperature: a number from 0 (greedy) to 10"),
    ({"top_p": 0}, "top_p", "top_p: a number over 0 and at most 1"),
    ({"n": 2}, "n", "n: only 1 is supported"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop", "stop: a string or a list of up to 4"),
])
def test_bad_parameters_are_refused_with_openais_error(client: openai.OpenAI, arguments: dict,
                                                       param: str, message: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.completions.create(model="tiny", prompt="x", **arguments)
    assert refused.value.status_code == 400
    assert refused.value.param == param and message in refused.value.message
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model="tiny", messages=[{"role": "robot",
                                                                "content": "x"}])
    with pytest.raises(openai.BadRequestError,
                       match="messages: the chat laid out as a prompt is over 8192 bytes"):
        client.chat.completions.create(model="tiny", messages=[{"role": "user",
                                                                "content": "x" * 9000}])
