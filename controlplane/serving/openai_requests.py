"""OpenAI's completions API as the control plane checks and answers it, in front of an endpoint
(openai_api.py serves it): the refusals, in OpenAI's error shape, of what would be refused
further on, so that a bad request is answered before anything is sent to Vertex; completions
built from the Predict contract's answers; server-sent events.

Vertex carries chat completions itself (v1beta1 PredictionService.ChatCompletions): the body
goes on as it came once checked. Vertex has no completions RPC (nor, over gRPC, a route of the
container's choosing: the `invoke` method is HTTP-only and takes over the predict route), so a
completion is the Predict contract's (contract/prediction.py): one instance a prompt, the same
instances the predict route sends, hence the same greedy text. Its stream is made here from
the whole answer: Predict answers at once.

The limits are the Predict contract's, whichever runtime serves: a prompt of at most
MAX_PROMPT_BYTES bytes (the model's own context window slides past its length) and max_tokens
from 1 to MAX_TOKENS_LIMIT. A chat's prompt is its messages laid out as the product's model
server lays them out (trainers/serving/openai_api.py chat_prompt: "role: content" lines, then
"assistant: "), counted in bytes as the byte-level model reads them.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from contract import prediction

ROLES = ("system", "user", "assistant", "developer")
# Parameters the server can honour only at their default: refused with the value rather than
# silently ignored (the model server refuses the same ones).
UNSUPPORTED: dict[str, Any] = {
    "n": 1, "best_of": 1, "echo": False, "logprobs": None, "top_logprobs": None,
    "suffix": None, "frequency_penalty": 0, "presence_penalty": 0, "logit_bias": None,
    "tools": None, "response_format": None}
# Accepted, and without effect on the answer.
IGNORED = frozenset({"model", "user", "stream_options", "tool_choice", "parallel_tool_calls",
                     "metadata", "store"})
SAMPLING = ("max_tokens", "temperature", "top_p", "seed", "stop")


class OpenAIError(Exception):
    """A refusal in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""

    TYPES = {400: "invalid_request_error", 401: "authentication_error",
             403: "permission_error", 404: "not_found_error", 409: "conflict_error",
             429: "rate_limit_error"}

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.status = status
        self.code = code

    def body(self) -> dict[str, Any]:
        return error_body(str(self), self.status, self.param, self.code)


def error_body(message: str, status: int, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    kind = OpenAIError.TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class Completion:
    """A checked completions request: one Predict instance a prompt."""

    def __init__(self, instances: list[dict[str, Any]], stream: bool,
                 include_usage: bool) -> None:
        self.instances = instances
        self.stream = stream
        self.include_usage = include_usage
        self.id = f"cmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())


def check_chat(body: Any) -> bool:
    """Whether the chat completions `body` asks to stream; OpenAIError naming the field where
    the model server would refuse it."""
    _check_object(body)
    _check_keys(body, "messages")
    stream = _stream(body)
    prompt = chat_prompt(body.get("messages"))
    _check_sampling(body, prompt, "messages")
    return stream


def check_completion(body: Any) -> Completion:
    _check_object(body)
    _check_keys(body, "prompt")
    stream = _stream(body)
    prompts = _prompts(body.get("prompt"))
    fields = {name: body[name] for name in SAMPLING if body.get(name) is not None}
    fields.setdefault("temperature", 1.0)  # OpenAI's default, not the Predict contract's 0
    for prompt in prompts:
        _check_sampling(body, prompt, "prompt")
    options = body.get("stream_options") or {}
    return Completion([{**fields, "prompt": p} for p in prompts], stream,
                      bool(options.get("include_usage")))


def _check_object(body: Any) -> None:
    if not isinstance(body, dict):
        raise OpenAIError("the body must be a JSON object of the request's parameters")


def _check_keys(body: dict[str, Any], prompt_field: str) -> None:
    allowed = {*SAMPLING, *UNSUPPORTED, *IGNORED, "stream", "max_completion_tokens",
               prompt_field}
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise OpenAIError(f"{unknown[0]}: not a parameter this API takes (it takes "
                          f"{', '.join(sorted(allowed))})", unknown[0])
    for name, default in UNSUPPORTED.items():
        if body.get(name, default) not in (default, None):
            raise OpenAIError(f"{name}: only {default!r} is supported by this server", name)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise OpenAIError("stream_options: an object, such as {\"include_usage\": true}",
                          "stream_options")
    if body.get("max_completion_tokens") is not None and body.get("max_tokens") is None:
        body["max_tokens"] = body.pop("max_completion_tokens")


def _stream(body: dict[str, Any]) -> bool:
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise OpenAIError("stream: true or false", "stream")
    return stream


def _check_sampling(body: dict[str, Any], prompt: str, prompt_field: str) -> None:
    """The Predict contract's checks of the prompt and the sampling parameters, each refusal
    naming OpenAI's parameter and its limit."""
    fields = {name: body[name] for name in SAMPLING if body.get(name) is not None}
    fields.setdefault("temperature", 1.0)
    try:
        prediction.parse_instance({**fields, "prompt": prompt})
    except prediction.BadInstance as exc:
        param = str(exc).split(":", 1)[0]
        if param == "prompt":
            size = len(prompt.encode("utf-8"))
            laid_out = " laid out as the model reads it" if prompt_field == "messages" else ""
            raise OpenAIError(
                f"{prompt_field}: the prompt is {size} bytes{laid_out}, over the "
                f"{prediction.MAX_PROMPT_BYTES} bytes of context a request may hold",
                prompt_field, code="context_length_exceeded") from exc
        raise OpenAIError(str(exc), param) from exc


def _prompts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(p, str) for p in value):
        return value
    raise OpenAIError("prompt: a string or a non-empty list of strings", "prompt")


def chat_prompt(messages: Any) -> str:
    """The prompt the product's model server reads from a chat (its chat_prompt)."""
    if not isinstance(messages, list) or not messages:
        raise OpenAIError("messages: a non-empty list of {role, content}", "messages")
    lines = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise OpenAIError(f"messages[{i}].role: one of {', '.join(ROLES)}", "messages")
        content = message.get("content")
        if isinstance(content, list):  # content parts: the text ones, joined
            content = "".join(p.get("text", "") for p in content
                              if isinstance(p, dict) and p.get("type") == "text")
        if not isinstance(content, str):
            raise OpenAIError(f"messages[{i}].content: a string, or a list of text parts",
                              "messages")
        lines.append(f"{message['role']}: {content}\n")
    return "".join(lines) + "assistant: "


# --- completions from the Predict contract's answers -----------------------------------------

def _choices(request: Completion, predictions: list[Any]) -> list[dict[str, Any]]:
    choices = []
    for index, (instance, answer) in enumerate(zip(request.instances, predictions,
                                                   strict=True)):
        text, tokens = answer.get("text", ""), int(answer.get("tokens", 0))
        limit = int(instance.get("max_tokens", prediction.DEFAULT_MAX_TOKENS))
        # A stop sequence ends the text before the bytes generated (it is left out). vLLM's
        # /generate gives no count (predictions.py): whether it stopped is not known, and
        # "length" does not claim a stop that may not have happened.
        stopped = "tokens" in answer and (tokens < limit or len(text.encode("utf-8")) < tokens)
        choices.append({"index": index, "text": text, "logprobs": None,
                        "finish_reason": "stop" if stopped else "length"})
    return choices


def _usage(request: Completion, predictions: list[Any]) -> dict[str, int]:
    # The byte-level model's tokens are bytes.
    prompt = sum(len(i["prompt"].encode("utf-8")) for i in request.instances)
    completion = sum(int(p.get("tokens", 0)) for p in predictions)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def completion_response(request: Completion, model: str,
                        predictions: list[Any]) -> dict[str, Any]:
    return {"id": request.id, "object": "text_completion", "created": request.created,
            "model": model, "choices": _choices(request, predictions),
            "usage": _usage(request, predictions)}


def completion_events(request: Completion, model: str, predictions: list[Any]) -> list[bytes]:
    """The answer as server-sent events: each choice's text with its finish reason, usage
    where asked, then [DONE]."""
    head = {"id": request.id, "object": "text_completion", "created": request.created,
            "model": model}
    events = [event({**head, "choices": [choice]})
              for choice in _choices(request, predictions)]
    if request.include_usage:
        events.append(event({**head, "choices": [], "usage": _usage(request, predictions)}))
    return [*events, DONE]


DONE = b"data: [DONE]\n\n"


def event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def container_refusal(message: str) -> OpenAIError:
    """The model server's own 400 (carried in Vertex's INVALID_ARGUMENT message as "... answered
    400: <its body>"), as OpenAI's error; its message whole when the body is not OpenAI's."""
    _, _, text = message.partition("answered 400: ")
    try:
        error = json.loads(text)["error"]
        return OpenAIError(str(error["message"]), error.get("param"))
    except (ValueError, KeyError, TypeError):
        return OpenAIError(message)
