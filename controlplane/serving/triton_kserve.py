"""The product's prediction shape spoken to a triton deployment in KServe v2 inference JSON.

A triton model (trainers/serving/triton_repo.py) serves the logits of every position:
`tokens` INT64 [batch, width] in, `logits` FP32 [batch, width, vocab] out. The loop that picks
the next byte stays with the client, so the control plane runs it the way the eager server does
(trainers/serving/generate.py): every active prompt of a batch, right-padded to the longest
(attention is causal, so padding after a prompt's last byte never changes that byte's logits),
the next byte chosen from each prompt's last position until each has its max_tokens: the
greedy one at temperature 0, else one drawn from softmax(logits / temperature). Pure Python:
the control plane holds no torch or numpy, so a seeded draw uses Python's own generator: the
same seed repeats a triton deployment's answer, not the eager server's (torch's generator).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

# triton_repo's tensor names and its config's max_batch_size (Batching.max_batch_size):
# Triton refuses a request with more rows than that.
INPUT_NAME = "tokens"
OUTPUT_NAME = "logits"
MAX_BATCH = 32
# The eager server's limits (trainers/serving/generate.py), so an instance means the same thing
# whichever runtime answers it.
MAX_PROMPT_BYTES = 8192
MAX_TOKENS_LIMIT = 512
DEFAULT_MAX_TOKENS = 16
MAX_TEMPERATURE = 10.0
EMPTY_PROMPT = b"\n"
PAD = 0


class BadInstance(ValueError):
    """An instance a triton deployment cannot answer; the message names the field at fault."""


class BadAnswer(ValueError):
    """The server's answer is not the logits a triton model's repository declares."""


@dataclass(frozen=True)
class Instance:
    prompt: bytes
    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None

    def generator(self) -> random.Random:
        """The draws of this instance: repeatable with a seed (text sampling: no secret)."""
        return random.Random(self.seed)


def parse_instances(instances: Any, parameters: Any) -> list[Instance]:
    """The eager server's instance forms and limits: a prompt string, or {"prompt",
    "max_tokens", "temperature", "seed"} with `parameters` as defaults."""
    if not isinstance(instances, list) or not instances:
        raise BadInstance("instances: a non-empty list")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise BadInstance("parameters: an object")
    return [_instance(f"instances[{i}]", value, parameters) for i, value in enumerate(instances)]


def _instance(where: str, value: Any, defaults: dict[str, Any]) -> Instance:
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise BadInstance(f"{where}: a string or an object with 'prompt'")
    unknown = set(value) - {"prompt", "max_tokens", "temperature", "seed"}
    if unknown:
        raise BadInstance(f"{where}: unknown keys {sorted(unknown)}")
    merged = {**defaults, **value}
    prompt = merged.get("prompt", "")
    if not isinstance(prompt, str):
        raise BadInstance(f"{where}.prompt: a string")
    encoded = prompt.encode("utf-8")
    if len(encoded) > MAX_PROMPT_BYTES:
        raise BadInstance(f"{where}.prompt: over {MAX_PROMPT_BYTES} bytes")
    max_tokens = merged.get("max_tokens", DEFAULT_MAX_TOKENS)
    if not _number(max_tokens) or max_tokens != int(max_tokens) \
            or not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise BadInstance(f"{where}.max_tokens: an integer from 1 to {MAX_TOKENS_LIMIT}")
    temperature = merged.get("temperature", 0)
    if not _number(temperature) or not 0 <= temperature <= MAX_TEMPERATURE:
        raise BadInstance(f"{where}.temperature: a number from 0 (greedy) to "
                          f"{MAX_TEMPERATURE:g}")
    seed = merged.get("seed")
    if seed is not None and (not _number(seed) or seed != int(seed)):
        raise BadInstance(f"{where}.seed: an integer")
    return Instance(encoded or EMPTY_PROMPT, int(max_tokens), float(temperature),
                    None if seed is None else int(seed))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def request_body(contexts: list[list[int]]) -> bytes:
    """KServe v2 inference request for one step: every context right-padded to the longest,
    row-major, as the generated config.pbtxt declares `tokens`."""
    if not 1 <= len(contexts) <= MAX_BATCH:
        raise ValueError(f"a request holds 1 to {MAX_BATCH} rows, not {len(contexts)}")
    width = max(len(c) for c in contexts)
    data = [t for c in contexts for t in (*c, *([PAD] * (width - len(c))))]
    body = {"inputs": [{"name": INPUT_NAME, "datatype": "INT64",
                        "shape": [len(contexts), width], "data": data}],
            "outputs": [{"name": OUTPUT_NAME}]}
    return json.dumps(body, separators=(",", ":")).encode()


def last_logits(answer: bytes, lengths: list[int]) -> list[list[float]]:
    """Each row's logits at its last real position."""
    try:
        outputs = json.loads(answer)["outputs"]
        logits = next(o for o in outputs if o.get("name") == OUTPUT_NAME)
        rows, width, vocab = (int(d) for d in logits["shape"])
        data = logits["data"]
    except (ValueError, KeyError, TypeError, StopIteration) as exc:
        raise BadAnswer(f"no {OUTPUT_NAME!r} output of shape [batch, width, vocab] in the "
                        f"answer: {exc}") from exc
    if rows != len(lengths) or width < max(lengths) or vocab < 1 \
            or not isinstance(data, list) or len(data) != rows * width * vocab:
        raise BadAnswer(f"{OUTPUT_NAME} has shape {[rows, width, vocab]} and {len(data)} "
                        f"values for {len(lengths)} rows up to {max(lengths)} wide")
    starts = [(row * width + length - 1) * vocab for row, length in enumerate(lengths)]
    return [data[start:start + vocab] for start in starts]


def choose(scores: list[float], temperature: float, draws: random.Random | None) -> int:
    """The next byte: the greedy one at temperature 0 (the first of equal maxima, as
    torch.argmax picks on CPU), else one drawn from softmax(scores / temperature)."""
    if temperature == 0 or draws is None:
        return max(range(len(scores)), key=scores.__getitem__)
    top = max(scores)
    weights = [math.exp((score - top) / temperature) for score in scores]
    point = draws.random() * sum(weights)
    for token, weight in enumerate(weights):
        point -= weight
        if point < 0:
            return token
    return len(weights) - 1  # rounding left a sliver past the last weight
