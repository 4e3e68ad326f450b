"""Instances in, text out: parsing prediction instances and generating bytes for many of them at
once.

An instance is a prompt string, or {"prompt": str, "max_tokens": int, "temperature": float,
"seed": int}; the request's `parameters` give defaults for the keys an instance leaves out.
A prediction is {"text": the generated continuation, "tokens": how many bytes were generated}.

Generation runs every active sequence of a batch through the model together: each is cropped to
the last block_size bytes and right-padded to the longest. Attention is causal, so padding after
a sequence's last byte never changes that byte's logits, and each sequence keeps positions from
0 as in training.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainers.torch.model import GPT

MAX_PROMPT_BYTES = 8192
MAX_TOKENS_LIMIT = 512
DEFAULT_MAX_TOKENS = 16
EMPTY_PROMPT = b"\n"  # a sequence needs one byte to predict the next from


class BadInstance(ValueError):
    """The request is malformed: answered with HTTP 400 and this message."""


@dataclass(frozen=True)
class Instance:
    prompt: bytes
    max_tokens: int
    temperature: float
    seed: int | None


def parse_instances(instances: Any, parameters: Any) -> list[Instance]:
    if not isinstance(instances, list) or not instances:
        raise BadInstance("'instances' must be a non-empty list")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise BadInstance("'parameters' must be an object")
    return [_instance(i, value, parameters) for i, value in enumerate(instances)]


def _instance(index: int, value: Any, defaults: dict[str, Any]) -> Instance:
    where = f"instances[{index}]"
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise BadInstance(f"{where} must be a string or an object with 'prompt'")
    unknown = set(value) - {"prompt", "max_tokens", "temperature", "seed"}
    if unknown:
        raise BadInstance(f"{where}: unknown keys {sorted(unknown)}")
    merged = {**defaults, **value}
    prompt = merged.get("prompt", "")
    if not isinstance(prompt, str):
        raise BadInstance(f"{where}.prompt must be a string")
    encoded = prompt.encode("utf-8")
    if len(encoded) > MAX_PROMPT_BYTES:
        raise BadInstance(f"{where}.prompt is over {MAX_PROMPT_BYTES} bytes")
    max_tokens = _number(merged.get("max_tokens", DEFAULT_MAX_TOKENS), f"{where}.max_tokens")
    if max_tokens != int(max_tokens) or not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise BadInstance(f"{where}.max_tokens must be an integer from 1 to {MAX_TOKENS_LIMIT}")
    temperature = _number(merged.get("temperature", 0.0), f"{where}.temperature")
    if not 0.0 <= temperature <= 10.0:
        raise BadInstance(f"{where}.temperature must be between 0 and 10")
    seed = merged.get("seed")
    if seed is not None:
        seed = _number(seed, f"{where}.seed")
        if seed != int(seed):
            raise BadInstance(f"{where}.seed must be an integer")
        seed = int(seed)
    return Instance(encoded or EMPTY_PROMPT, int(max_tokens), float(temperature), seed)


def _number(value: Any, where: str) -> float:
    # JSON (and protobuf Value) numbers may arrive as floats: 16.0 is a fine max_tokens.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInstance(f"{where} must be a number")
    return float(value)


@torch.inference_mode()
def generate(
    model: GPT,
    instances: Sequence[Instance],
    on_done: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Continue every instance; `on_done(i, prediction)` fires as soon as instance i is done,
    so a short request batched with a long one need not wait for it."""
    block = model.config.block_size
    # A packaged model (the aot runtime) holds no parameters of its own: it names its device.
    device = getattr(model, "device", None) or next(model.parameters()).device
    sequences = [list(i.prompt) for i in instances]
    generated: list[list[int]] = [[] for _ in instances]
    generators = [
        torch.Generator(device=device).manual_seed(i.seed) if i.seed is not None else None
        for i in instances
    ]
    results: list[dict[str, Any] | None] = [None] * len(instances)
    active = list(range(len(instances)))
    while active:
        contexts = [sequences[i][-block:] for i in active]
        lengths = torch.tensor([len(c) for c in contexts], device=device)
        width = int(lengths.max())
        batch = torch.zeros((len(active), width), dtype=torch.long, device=device)
        for row, context in enumerate(contexts):
            batch[row, : len(context)] = torch.tensor(context, dtype=torch.long)
        logits, _ = model(batch)
        last = logits[torch.arange(len(active), device=device), lengths - 1].float()
        still = []
        for row, i in enumerate(active):
            token = _choose(last[row], instances[i].temperature, generators[i])
            sequences[i].append(token)
            generated[i].append(token)
            if len(generated[i]) >= instances[i].max_tokens:
                results[i] = {
                    "text": bytes(generated[i]).decode("utf-8", "replace"),
                    "tokens": len(generated[i]),
                }
                if on_done is not None:
                    on_done(i, results[i])
            else:
                still.append(i)
        active = still
    return [r for r in results if r is not None]


def _choose(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> int:
    if temperature == 0.0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))
