"""The product's prediction shape spoken to a triton deployment in KServe v2 inference JSON.

A triton model registered now is generated inside Triton: the repository's ``gpt_generate``
model (trainers/serving/triton_generate_model.py) is the one the predict route reaches, and one
request holds the whole generation of each of its rows (`generation_body`), every row an
instance in the contract's own JSON, answered with its text and byte count (`generations`).
The control plane only proxies it.

A tensorrt model, and a triton model registered before (its container names the logits model,
``gpt``), serves the logits of every position:
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
from typing import Any

from contract import prediction

# The instances, their limits and the KServe v2 tensors are the contract's
# (contract/prediction.py): the eager server reads the same instances, so an instance means the
# same thing whichever runtime answers it, and the generated repositories declare the same
# tensors and max_batch_size.
BadInstance = prediction.BadInstance
BadAnswer = prediction.BadAnswer
Instance = prediction.Instance
MAX_BATCH = prediction.MAX_BATCH
parse_instances = prediction.parse_instances
request_body = prediction.request_body
last_logits = prediction.last_logits


GENERATE_INPUT = "instance"
GENERATE_TEXT = "text_output"
GENERATE_TOKENS = "tokens"


def instance_json(instance: Instance) -> dict[str, Any]:
    """An instance as the contract's JSON again (its prompt and stops came from text, so they
    decode back to the same strings): what the generation model parses as the eager server
    does."""
    value: dict[str, Any] = {"prompt": instance.prompt.decode("utf-8"),
                             "max_tokens": instance.max_tokens,
                             "temperature": instance.temperature, "top_p": instance.top_p}
    if instance.seed is not None:
        value["seed"] = instance.seed
    if instance.stop:
        value["stop"] = [stop.decode("utf-8") for stop in instance.stop]
    return value


def generation_body(instances: list[Instance]) -> bytes:
    """KServe v2 inference request for the generation model: one row an instance."""
    if not 1 <= len(instances) <= MAX_BATCH:
        raise ValueError(f"a request holds 1 to {MAX_BATCH} rows, not {len(instances)}")
    data = [json.dumps(instance_json(i), separators=(",", ":")) for i in instances]
    body = {"inputs": [{"name": GENERATE_INPUT, "datatype": "BYTES",
                        "shape": [len(instances), 1], "data": data}],
            "outputs": [{"name": GENERATE_TEXT}, {"name": GENERATE_TOKENS}]}
    return json.dumps(body, separators=(",", ":")).encode()


def generations(answer: bytes, rows: int) -> list[dict[str, Any]]:
    """The predictions in the generation model's answer, one a row."""
    try:
        outputs = {o.get("name"): o for o in json.loads(answer)["outputs"]}
        texts, counts = outputs[GENERATE_TEXT]["data"], outputs[GENERATE_TOKENS]["data"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadAnswer(f"no {GENERATE_TEXT!r} and {GENERATE_TOKENS!r} outputs in the "
                        f"answer: {exc}") from exc
    if not isinstance(texts, list) or not isinstance(counts, list) \
            or len(texts) != rows or len(counts) != rows \
            or not all(isinstance(t, str) for t in texts) \
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        raise BadAnswer(f"{GENERATE_TEXT} and {GENERATE_TOKENS} do not hold a string and a "
                        f"count for each of the {rows} rows")
    return [{"text": text, "tokens": count} for text, count in zip(texts, counts, strict=True)]


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
