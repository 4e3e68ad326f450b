"""OpenAI's completions API on the model server, as vLLM serves it, so a client written for a
vLLM endpoint (the `openai` package with base_url=<server>/v1) talks to this one unchanged.

    POST /v1/completions       {"model", "prompt": str | [str], "max_tokens", "temperature",
                                "top_p", "seed", "stop", "stream", "n": 1}
    POST /v1/chat/completions  {"model", "messages": [{"role", "content"}], ...the same}
    GET  /v1/models

The fields mean what they mean in the Predict contract (contract/prediction.py) and are checked
by it; OpenAI's defaults differ where its API's do (temperature 1). A Hugging Face export with
a chat template of its own has its chats laid out by it (chat_template.py); the byte-level
model and an export without one lay a chat out as "role: content" lines, then "assistant: ",
and the reply is generated from there. Token counts in `usage` are the model's tokens (bytes
for the byte-level model). A refusal is OpenAI's error object with a 400, naming the
parameter. With "stream": true the answer is server-sent events, one chunk per decoding step
that adds text, then `data: [DONE]`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from contract.prediction import BadInstance, Instance, parse_instance
from trainers.serving.decoding import Sequence

COMPLETIONS = "/v1/completions"
CHAT = "/v1/chat/completions"
MODELS = "/v1/models"
# Known parameters this server cannot honour otherwise than at their default: refused with
# the value, rather than silently ignored.
UNSUPPORTED = {"n": 1, "best_of": 1, "echo": False, "logprobs": None, "top_logprobs": None,
               "suffix": None, "frequency_penalty": 0, "presence_penalty": 0,
               "logit_bias": None, "tools": None, "response_format": None}
# Accepted and without effect on a byte-level model's answer.
IGNORED = {"model", "user", "stream_options", "max_completion_tokens", "tool_choice",
           "parallel_tool_calls", "metadata", "store"}
SAMPLING = ("max_tokens", "temperature", "top_p", "seed", "stop")
ROLES = ("system", "user", "assistant", "developer")


class OpenAIError(ValueError):
    """A request OpenAI's API would refuse with a 400; `param` names the field."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": "invalid_request_error",
                          "param": self.param, "code": None}}


class Request:
    """One parsed completions or chat request: its instances, one per prompt."""

    def __init__(self, chat: bool, instances: list[Instance], stream: bool,
                 include_usage: bool, special_tokens: bool = True) -> None:
        self.chat = chat
        # Whether the tokenizer adds its special tokens to the prompt: not to a chat laid out
        # by the model's own template, which writes them itself (vLLM's rule).
        self.special_tokens = special_tokens
        self.instances = instances
        self.stream = stream
        self.include_usage = include_usage
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.object = "chat.completion" if chat else "text_completion"


def parse(route: str, body: dict[str, Any],
          template: Callable[[list[dict[str, str]]], str] | None = None) -> Request:
    """`template`: the model's own chat template (messages -> prompt), where it has one."""
    chat = route == CHAT
    allowed = set(SAMPLING) | set(UNSUPPORTED) | IGNORED | {"stream"}
    allowed.add("messages" if chat else "prompt")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise OpenAIError(f"unknown parameters {unknown}", unknown[0])
    for name, default in UNSUPPORTED.items():
        if body.get(name, default) not in (default, None):
            raise OpenAIError(f"{name}: only {default!r} is supported by this server", name)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise OpenAIError("stream: true or false", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise OpenAIError("stream_options: an object", "stream_options")
    fields = {name: body[name] for name in SAMPLING if body.get(name) is not None}
    if body.get("max_completion_tokens") is not None and "max_tokens" not in fields:
        fields["max_tokens"] = body["max_completion_tokens"]
    fields.setdefault("temperature", 1.0)
    if chat:
        messages = chat_messages(body.get("messages"))
        try:
            prompts = [template(messages) if template else layout(messages)]
        except ValueError as exc:  # the template refused the conversation
            raise OpenAIError(f"messages: {exc}", "messages") from None
    else:
        prompts = _prompts(body.get("prompt"))
    try:
        instances = [parse_instance({**fields, "prompt": p}) for p in prompts]
    except BadInstance as exc:
        message = str(exc)
        param = message.split(":", 1)[0].split(".")[-1]
        if chat and param == "prompt":
            param = "messages"
            message = message.replace("prompt:", "messages: the chat laid out as a prompt is", 1)
        raise OpenAIError(message, param) from exc
    return Request(chat, instances, stream, bool(options.get("include_usage")),
                   special_tokens=not (chat and template))


def _prompts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(p, str) for p in value):
        return value
    raise OpenAIError("prompt: a string or a non-empty list of strings", "prompt")


def chat_prompt(messages: Any) -> str:
    """The byte-level model's chat layout: one "role: content" line a message, then the
    assistant's turn."""
    return layout(chat_messages(messages))


def layout(messages: list[dict[str, str]]) -> str:
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "


def chat_messages(messages: Any) -> list[dict[str, str]]:
    """The messages checked, each as {"role", "content"} with its text parts joined."""
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
            raise OpenAIError(f"messages[{i}].content: a string", "messages")
        lines.append({"role": message["role"], "content": content})
    return lines


def _usage(sequences: list[Sequence]) -> dict[str, int]:
    prompt = sum(len(s.prompt_ids or s.instance.prompt) for s in sequences)
    completion = sum(len(s.generated) for s in sequences)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def response(request: Request, model: str, sequences: list[Sequence]) -> dict[str, Any]:
    """The whole answer (no stream)."""
    choices = []
    for index, sequence in enumerate(sequences):
        text = sequence.text()
        if request.chat:
            choices.append({"index": index, "message": {"role": "assistant", "content": text},
                            "logprobs": None, "finish_reason": sequence.finish_reason})
        else:
            choices.append({"index": index, "text": text, "logprobs": None,
                            "finish_reason": sequence.finish_reason})
    return {"id": request.id, "object": request.object, "created": request.created,
            "model": model, "choices": choices, "usage": _usage(sequences)}


def chunk(request: Request, model: str, index: int, text: str | None,
          finish_reason: str | None, first: bool = False) -> dict[str, Any]:
    """One streamed event: new text of choice `index`, or its finish reason."""
    if request.chat:
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if text:
            delta["content"] = text
        choice: dict[str, Any] = {"index": index, "delta": delta, "logprobs": None,
                                  "finish_reason": finish_reason}
        kind = "chat.completion.chunk"
    else:
        choice = {"index": index, "text": text or "", "logprobs": None,
                  "finish_reason": finish_reason}
        kind = "text_completion"
    return {"id": request.id, "object": kind, "created": request.created, "model": model,
            "choices": [choice]}


def usage_chunk(request: Request, model: str, sequences: list[Sequence]) -> dict[str, Any]:
    kind = "chat.completion.chunk" if request.chat else "text_completion"
    return {"id": request.id, "object": kind, "created": request.created, "model": model,
            "choices": [], "usage": _usage(sequences)}


def models(model: str, created: int, max_model_len: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": model, "object": "model", "created": created,
                             "owned_by": "vertex-control-plane"}
    if max_model_len is not None:  # as vLLM's /v1/models reports it
        entry["max_model_len"] = max_model_len
    return {"object": "list", "data": [entry]}
