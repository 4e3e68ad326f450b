"""The HTTP side of Vertex AI's custom-container contract.

    GET  AIP_HEALTH_ROUTE   200 once the model is loaded (Vertex sends traffic only then)
    POST AIP_PREDICT_ROUTE  {"instances": [...], "parameters": {...}} -> {"predictions": [...]}

A malformed request is a 400 with {"error": message}; a failure of the model a 500. Threads
serve connections (HTTP/1.1 keep-alive, as Vertex's front ends keep connections open) and hand
the instances to the batcher, so concurrent requests share forward passes.

Beside them, where the batcher decodes continuously (batcher.ContinuousBatcher), OpenAI's
completions API as vLLM serves it (openai_api.py): /v1/completions, /v1/chat/completions
(streamed as server-sent events in chunked transfer encoding when asked) and /v1/models.
Prompts are encoded by the model's codec in the request's thread (codec.py), so one that
does not fit a Hugging Face model's context is a 400 naming the field and the limit before
anything is queued. With `vllm=True` (a replica standing in for Vertex's vLLM container)
vLLM's own routes too: /ping and /health, and /generate (vllm_api.py).
"""

from __future__ import annotations

import codecs
import json
import logging
import queue
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contract.prediction import BadInstance, Instance, parse_instances
from trainers.serving import openai_api, vllm_api
from trainers.serving.batcher import Batcher, ContinuousBatcher
from trainers.serving.decoding import Sequence

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024
REQUEST_TIMEOUT_S = 120.0


class PredictionServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once under load; the default backlog of 5 refuses some.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        batcher: Batcher[Any] | ContinuousBatcher,
        health_route: str,
        predict_route: str,
        info: dict[str, Any],
        model_name: str = "model",
        chat_template: Callable[[list[dict[str, str]]], str] | None = None,
        vllm: bool = False,
    ) -> None:
        self.batcher = batcher
        # Encodes prompts (and checks them against the model's context): a continuous
        # batcher's decoder's codec; the other batcher takes the instances as they are.
        self.codec = batcher.decoder.codec if isinstance(batcher, ContinuousBatcher) else None
        self.chat_template = chat_template
        self.vllm = vllm
        self.health_route = health_route
        self.predict_route = predict_route
        self.info = info
        # The name OpenAI's routes answer with (vLLM's --served-model-name).
        self.model_name = model_name
        self.created = int(time.time())
        # OpenAI's routes need a batcher that reports each sequence as it decodes.
        self.openai = isinstance(batcher, ContinuousBatcher)
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: PredictionServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's
    # delayed ACK of the headers (40 ms on Linux) on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log: a prober's every request would fill the replica's log

    def _path(self) -> str:
        return self.path.split("?", 1)[0]

    def do_GET(self) -> None:
        path = self._path()
        if path == self.server.health_route or (
                self.server.vllm and path in vllm_api.HEALTH_ROUTES):
            self._reply(HTTPStatus.OK, {"status": "ok", **self.server.info})
        elif path == openai_api.MODELS and self.server.openai:
            context = self.server.codec.context if self.server.codec else None
            self._reply(HTTPStatus.OK,
                        openai_api.models(self.server.model_name, self.server.created, context))
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no route {self._path()}"})

    def do_POST(self) -> None:
        if self._path() in (openai_api.COMPLETIONS, openai_api.CHAT) and self.server.openai:
            self._openai(self._path())
            return
        if self.server.vllm and self._path() == vllm_api.GENERATE:
            self._generate()
            return
        if self._path() != self.server.predict_route:
            self._drain()
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no route {self._path()}"})
            return
        try:
            body = self._json_body()
            instances = parse_instances(body.get("instances"), body.get("parameters"))
            prompts = self._encode(instances, [f"instances[{i}]." for i in range(len(instances))])
        except BadInstance as exc:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        if prompts is None:
            future = self.server.batcher.submit(instances)
        else:
            future = self.server.batcher.submit(instances, prompts)  # type: ignore[call-arg]
        try:
            predictions = future.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            if self.server.openai:  # a continuous batcher stops generating what nobody awaits
                future.cancel()
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "prediction timed out"})
            return
        except Exception as exc:
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"prediction failed: {exc}"})
            return
        self._reply(HTTPStatus.OK, {"predictions": predictions})

    def _encode(self, instances: list[Instance], where: list[str],
                special: bool = True) -> list[list[int]] | None:
        """Each instance's prompt as the model's tokens (BadInstance naming the field where
        one does not fit); None where the batcher takes the instances as they are."""
        codec = self.server.codec
        if codec is None:
            return None
        return [codec.encode(instance, at, special)
                for instance, at in zip(instances, where, strict=True)]

    def _openai(self, route: str) -> None:
        try:
            body = self._json_body()
            request = openai_api.parse(route, body, self.server.chat_template)
            prompts = self._encode(request.instances, [""] * len(request.instances),
                                   request.special_tokens)
        except BadInstance as exc:
            message = str(exc)
            param: str | None = message.split(":", 1)[0]
            if param not in ("prompt", "max_tokens"):  # not a field: the body itself
                param = None
            if route == openai_api.CHAT and param == "prompt":
                param = "messages"
                message = message.replace("prompt:", "messages: the chat laid out as a prompt "
                                          "is", 1)
            self._reply(HTTPStatus.BAD_REQUEST, openai_api.OpenAIError(message, param).body())
            return
        except openai_api.OpenAIError as exc:
            self._reply(HTTPStatus.BAD_REQUEST, exc.body())
            return
        batcher: ContinuousBatcher = self.server.batcher  # type: ignore[assignment]
        if request.stream:
            self._stream(request, batcher, prompts)
            return
        generation = batcher.start(request.instances, prompt_ids=prompts)
        try:
            sequences = generation.future.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            for sequence in generation.sequences:
                sequence.cancelled = True
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, _server_error("generation timed out"))
            return
        except Exception as exc:
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR,
                        _server_error(f"generation failed: {exc}"))
            return
        self._reply(HTTPStatus.OK,
                    openai_api.response(request, self.server.model_name, sequences))

    def _generate(self) -> None:
        """vLLM's /generate, in Vertex's body or vLLM's own (vllm_api.py)."""
        try:
            body = self._json_body()
            instances, raw, vertex = vllm_api.parse_generate(body)
            where = [f"instances[{i}]." if vertex else "" for i in range(len(instances))]
            prompts = self._encode(instances, where)
        except BadInstance as exc:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        batcher: ContinuousBatcher = self.server.batcher  # type: ignore[assignment]
        generation = batcher.start(instances, prompt_ids=prompts)
        try:
            sequences = generation.future.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            for sequence in generation.sequences:
                sequence.cancelled = True
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "generation timed out"})
            return
        except Exception as exc:
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"generation failed: {exc}"})
            return
        texts = [s.text() for s in sequences]
        self._reply(HTTPStatus.OK, vllm_api.answer(instances, texts, raw, vertex))

    def _stream(self, request: openai_api.Request, batcher: ContinuousBatcher,
                prompts: list[list[int]] | None) -> None:
        """Server-sent events: a chunk whenever a step adds text a choice may show (bytes
        that could still begin a stop sequence wait; a character split across steps is sent
        whole), each choice's finish reason, usage where asked, then [DONE]."""
        updates: queue.Queue[tuple[Sequence, int] | None] = queue.Queue()
        generation = batcher.start(request.instances,
                                   on_token=lambda s: updates.put((s, s.ready())),
                                   prompt_ids=prompts)
        generation.future.add_done_callback(lambda _f: updates.put(None))
        index = {id(s): i for i, s in enumerate(generation.sequences)}
        sent = [0] * len(generation.sequences)
        utf8 = [codecs.getincrementaldecoder("utf-8")("replace") for _ in sent]
        model = self.server.model_name
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if request.chat:
                for i in range(len(sent)):
                    self._event(openai_api.chunk(request, model, i, None, None, first=True))
            deadline = time.monotonic() + REQUEST_TIMEOUT_S
            while (update := updates.get(timeout=max(0.0, deadline - time.monotonic()))):
                sequence, ready = update
                i = index[id(sequence)]
                text = utf8[i].decode(sequence.out[sent[i]:ready])
                sent[i] = max(sent[i], ready)
                if text:
                    self._event(openai_api.chunk(request, model, i, text, None))
            error = generation.future.exception()
            if error is not None:
                self._event(_server_error(f"generation failed: {error}"))
            else:
                for i, sequence in enumerate(generation.sequences):
                    tail = sequence.out[sent[i]:sequence.ready()]
                    text = utf8[i].decode(tail, final=True)
                    self._event(openai_api.chunk(request, model, i, text or None,
                                                 sequence.finish_reason))
                if request.include_usage:
                    self._event(openai_api.usage_chunk(request, model, generation.sequences))
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")
        except (OSError, queue.Empty):
            # The client went away (or the generation stalled): nobody reads the rest.
            for sequence in generation.sequences:
                sequence.cancelled = True
            self.close_connection = True

    def _event(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, separators=(",", ":"))
        self._write_chunk(f"data: {data}\n\n".encode())

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)

    def _json_body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError as exc:
            raise BadInstance("bad Content-Length") from exc
        if length <= 0:
            raise BadInstance("the request has no body")
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read: the connection is unusable
            raise BadInstance(f"the body is over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise BadInstance(f"the body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise BadInstance('the body must be an object: {"instances": [...]}')
        return body

    def _reply(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _server_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
