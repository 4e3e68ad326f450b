"""OpenAI's API in front of an endpoint (controlplane/serving/openai_api.py) against the fake
Vertex: the Bearer token, the predict route's access rules, refusals in OpenAI's shape before
anything is sent on, and completions built from the Predict contract. The same routes with the
`openai` client, through the emulator to a real model server: tests/integration/test_serving.py.
"""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from contract import prediction
from controlplane.security import tokens
from controlplane.serving.models import Endpoint
from tests.serving import test_api
from tests.serving.fakes import FakeServing

CHAT = "/api/v1/serving/endpoints/{}/openai/v1/chat/completions"
COMPLETIONS = "/api/v1/serving/endpoints/{}/openai/v1/completions"
MODELS = "/api/v1/serving/endpoints/{}/openai/v1/models"

deployed = test_api.deployed  # the fixture: a ready endpoint with a model deployed


def bearer(user: Any, **kwargs: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {tokens.create(user, 'openai', **kwargs).key}")


def post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def test_bearer_token_chat_completions_whole_and_streamed(
        deployed: Endpoint, fake: FakeServing, member: Any) -> None:
    client = bearer(member)
    body = {"model": "m", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
    response = post(client, CHAT.format(deployed.pk), body)
    assert response.status_code == 200, response.content
    assert response.json()["choices"][0]["message"]["content"] == "hello"
    assert fake.calls[-1] == ("chat_completions", deployed.vertex_name)

    response = post(client, CHAT.format(deployed.pk), {**body, "stream": True})
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    events = b"".join(response.streaming_content).decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    assert "".join(json.loads(e[6:])["choices"][0]["delta"]["content"]
                   for e in events[:-2]) == "hello"

    listed = client.get(MODELS.format(deployed.pk)).json()
    assert listed["object"] == "list" and len(listed["data"]) == 1


def test_completions_are_the_predict_contracts(deployed: Endpoint, fake: FakeServing,
                                               member: Any) -> None:
    client = bearer(member)
    response = post(client, COMPLETIONS.format(deployed.pk),
                    {"model": "m", "prompt": ["a", "b"], "max_tokens": 1, "temperature": 0})
    assert response.status_code == 200, response.content
    answer = response.json()
    assert [c["text"] for c in answer["choices"]] == ["x", "x"]  # the fake's predictions
    assert [c["finish_reason"] for c in answer["choices"]] == ["length", "length"]
    assert answer["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}

    response = post(client, COMPLETIONS.format(deployed.pk),
                    {"prompt": "a", "max_tokens": 3, "stream": True,
                     "stream_options": {"include_usage": True}})
    events = b"".join(response.streaming_content).decode().split("\n\n")
    first = json.loads(events[0][6:])["choices"][0]
    assert (first["text"], first["finish_reason"]) == ("x", "stop")
    assert json.loads(events[1][6:])["usage"]["completion_tokens"] == 1
    assert events[-2:] == ["data: [DONE]", ""]


def test_refusals_name_the_field_and_limit_and_send_nothing(
        deployed: Endpoint, fake: FakeServing, member: Any) -> None:
    client = bearer(member)
    sent = len(fake.calls)
    long = "x" * (prediction.MAX_PROMPT_BYTES + 1)
    cases = [
        (CHAT, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10_000},
         "max_tokens", f"1 to {prediction.MAX_TOKENS_LIMIT}"),
        (CHAT, {"messages": [{"role": "user", "content": long}]}, "messages",
         f"over the {prediction.MAX_PROMPT_BYTES} bytes"),
        (CHAT, {"messages": []}, "messages", "non-empty list"),
        (COMPLETIONS, {"prompt": long}, "prompt", f"over the {prediction.MAX_PROMPT_BYTES}"),
        (COMPLETIONS, {"prompt": "a", "n": 2}, "n", "only 1"),
        (COMPLETIONS, {"prompt": "a", "stream": "yes"}, "stream", "true or false"),
        (COMPLETIONS, {"prompt": "a", "frobnicate": 1}, "frobnicate", "not a parameter"),
    ]
    for route, body, param, says in cases:
        response = post(client, route.format(deployed.pk), body)
        assert response.status_code == 400, (body, response.content)
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == param, error
        assert says in error["message"], error
    assert len(fake.calls) == sent  # nothing went to Vertex


def test_access_is_the_predict_routes(deployed: Endpoint, fake: FakeServing, member: Any,
                                      viewer: Any, outsider: Any) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    # No token, a bad one, and a Token keyword (the rest of the API's) also taken here.
    assert post(Client(), CHAT.format(deployed.pk), body).json()["error"]["type"] == \
        "authentication_error"
    bad = post(Client(HTTP_AUTHORIZATION="Bearer nope"), CHAT.format(deployed.pk), body)
    assert bad.status_code == 401 and "Invalid" in bad.json()["error"]["message"]
    key = tokens.create(member, "cli").key
    assert post(Client(HTTP_AUTHORIZATION=f"Token {key}"), CHAT.format(deployed.pk),
                body).status_code == 200
    # Another team's endpoint is not found; a viewer and a read-only token may not send.
    other = post(bearer(outsider), CHAT.format(deployed.pk), body)
    assert other.status_code == 404 and other.json()["error"]["type"] == "not_found_error"
    assert post(bearer(viewer), CHAT.format(deployed.pk), body).status_code == 403
    assert post(bearer(member, read_only=True), CHAT.format(deployed.pk),
                body).status_code == 403
    # A Vertex failure is a 502 in OpenAI's shape.
    from controlplane.backends import errors
    fake.predict_error = errors.TransientBackendError("Predict: UNAVAILABLE")
    failed = post(bearer(member), COMPLETIONS.format(deployed.pk), {"prompt": "a"})
    assert failed.status_code == 502 and failed.json()["error"]["type"] == "api_error"


def test_a_triton_endpoint_completes_but_has_no_chat(deployed: Endpoint, fake: FakeServing,
                                                     member: Any) -> None:
    from controlplane.serving.models import ModelEntry
    ModelEntry.objects.filter(deployments__endpoint=deployed).update(runtime="triton")
    client = bearer(member)
    chat = post(client, CHAT.format(deployed.pk),
                {"messages": [{"role": "user", "content": "hi"}]})
    assert chat.status_code == 409 and "Triton" in chat.json()["error"]["message"]
    # Completions run the generation loop over rawPredict, as the predict route does.
    response = post(client, COMPLETIONS.format(deployed.pk),
                    {"prompt": "a", "max_tokens": 3, "temperature": 0})
    assert response.status_code == 200, response.content
    assert response.json()["choices"][0]["text"] == "bcd"  # the fake's logits: byte + 1
    assert [c[0] for c in fake.calls].count("raw_predict") == 3


def test_under_asgi_a_stream_is_sent_as_vertex_hands_it_over(
        deployed: Endpoint, fake: FakeServing, member: Any) -> None:
    """Django reads a sync iterator whole before an ASGI server sends any of it: the route
    hands it an async one, so the first event goes out while Vertex has handed over no more
    than that event. A client that leaves ends the call."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    handed: list[bytes] = []
    cancelled: list[bool] = []

    class Stream:
        def __init__(self) -> None:
            self.events = iter([b'data: {"choices":[]}\n\n'] * 3 + [b"data: [DONE]\n\n"])

        def __iter__(self) -> Stream:
            return self

        def __next__(self) -> bytes:
            handed.append(next(self.events))
            return handed[-1]

        def close(self) -> None:
            cancelled.append(True)

    fake.chat_completions = lambda *args, **kwargs: Stream()  # type: ignore[method-assign]
    key = tokens.create(member, "openai").key

    async def first_event() -> bytes:
        response = await AsyncClient().post(
            CHAT.format(deployed.pk), {"messages": [{"role": "user", "content": "hi"}],
                                       "stream": True},
            content_type="application/json", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200 and response.is_async
        chunks = aiter(response.streaming_content)
        try:
            return await anext(chunks)
        finally:
            await chunks.aclose()

    assert async_to_sync(first_event)() == b'data: {"choices":[]}\n\n'
    assert len(handed) == 1, "nothing read ahead of what was sent"
    assert cancelled, "the client left: the call is ended"


def test_an_id_that_is_no_endpoints_is_openais_404(member: Any) -> None:
    """Not Django's page, nor (for a POST without a trailing slash) a failed redirect."""
    client = bearer(member)
    for path in ("/api/v1/serving/endpoints/null,null/openai/v1/chat/completions",
                 "/api/v1/serving/endpoints/x/openai/v1/completions"):
        response = client.post(path, {"prompt": "a"}, content_type="application/json")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found" or \
            "no endpoint" in response.json()["error"]["message"]
    models = client.get("/api/v1/serving/endpoints/-1/openai/v1/models")
    assert models.status_code == 404 and "no endpoint" in models.json()["error"]["message"]
