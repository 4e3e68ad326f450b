"""The prediction request and response a deployed model speaks, whichever runtime serves it.

The product's own server (eager, compiled, aot) takes Vertex's Predict body:

    {"instances": [instance, ...], "parameters": {defaults for the instances}}
    instance: "a prompt", or {"prompt": str, "max_tokens": int, "temperature": float,
              "top_p": float, "seed": int, "stop": str | [str, ...]}
    -> {"predictions": [{"text": the generated continuation, "tokens": bytes generated}, ...]}

Generation ends after max_tokens bytes or at the first stop sequence, which the text leaves out
(as OpenAI's API and vLLM do; "tokens" counts its bytes). top_p keeps the most likely bytes
whose probabilities reach top_p (nucleus sampling) before a draw at temperature > 0.

Triton (the triton and tensorrt runtimes) serves logits instead, in KServe v2 inference JSON
through rawPredict (VERTEX_FACTS.md A6): `tokens` INT64 [batch, width] in, `logits` FP32
[batch, width, vocab] out, at most MAX_BATCH rows a request. The loop that picks each next byte
stays with the client, which takes the same instances and answers the same predictions.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

# --- the Predict body ------------------------------------------------------------------------

REQUEST_KEYS = frozenset({"instances", "parameters"})
INSTANCE_KEYS = frozenset({"prompt", "max_tokens", "temperature", "top_p", "seed", "stop"})
MAX_PROMPT_BYTES = 8192
MAX_TOKENS_LIMIT = 512
DEFAULT_MAX_TOKENS = 16
MAX_TEMPERATURE = 10.0
MAX_STOPS = 4  # OpenAI's limit on stop sequences
MAX_STOP_BYTES = 64
EMPTY_PROMPT = b"\n"  # a sequence needs one byte to predict the next from


class BadInstance(ValueError):
    """A request that cannot be answered; the message names the field at fault."""


@dataclass(frozen=True)
class Instance:
    prompt: bytes
    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    top_p: float = 1.0
    stop: tuple[bytes, ...] = ()

    def generator(self) -> random.Random:
        """Python's own generator for this instance's draws, repeatable with a seed (text
        sampling: no secret). The eager server draws with torch's generator instead, so one
        seed gives each runtime its own answer."""
        return random.Random(self.seed)


def parse_instances(instances: Any, parameters: Any) -> list[Instance]:
    """Every instance of a request, with `parameters` as the defaults of the keys it leaves
    out; BadInstance naming the first field at fault."""
    if not isinstance(instances, list) or not instances:
        raise BadInstance("instances: a non-empty list")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise BadInstance("parameters: an object")
    return [parse_instance(value, parameters, f"instances[{i}]")
            for i, value in enumerate(instances)]


def parse_instance(value: Any, defaults: dict[str, Any] | None = None,
                   where: str = "") -> Instance:
    """One instance (a prompt, or an object); BadInstance naming the field, after `where.`
    where given (parse_instances names the instance; OpenAI's API names the field alone)."""
    at = f"{where}." if where else ""
    defaults = defaults or {}
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise BadInstance(f"{where or 'instance'}: a string or an object with 'prompt'")
    unknown = set(value) - INSTANCE_KEYS
    if unknown:
        raise BadInstance(f"{where or 'instance'}: unknown keys {sorted(unknown)}")
    merged = {**defaults, **value}
    prompt = merged.get("prompt", "")
    if not isinstance(prompt, str):
        raise BadInstance(f"{at}prompt: a string")
    encoded = prompt.encode("utf-8")
    if len(encoded) > MAX_PROMPT_BYTES:
        raise BadInstance(f"{at}prompt: over {MAX_PROMPT_BYTES} bytes")
    # JSON (and protobuf Value) numbers may arrive as floats: 16.0 is a fine max_tokens.
    max_tokens = merged.get("max_tokens", DEFAULT_MAX_TOKENS)
    if not _number(max_tokens) or max_tokens != int(max_tokens) \
            or not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise BadInstance(f"{at}max_tokens: an integer from 1 to {MAX_TOKENS_LIMIT}")
    temperature = merged.get("temperature", 0)
    if not _number(temperature) or not 0 <= temperature <= MAX_TEMPERATURE:
        raise BadInstance(f"{at}temperature: a number from 0 (greedy) to "
                          f"{MAX_TEMPERATURE:g}")
    top_p = merged.get("top_p", 1)
    if not _number(top_p) or not 0 < top_p <= 1:
        raise BadInstance(f"{at}top_p: a number over 0 and at most 1 (1: every byte)")
    seed = merged.get("seed")
    if seed is not None and (not _number(seed) or seed != int(seed)):
        raise BadInstance(f"{at}seed: an integer")
    return Instance(encoded or EMPTY_PROMPT, int(max_tokens), float(temperature),
                    None if seed is None else int(seed), float(top_p),
                    parse_stop(f"{at}stop", merged.get("stop")))


def parse_stop(where: str, value: Any) -> tuple[bytes, ...]:
    """Stop sequences as bytes: none, one string or a list of up to MAX_STOPS."""
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or len(stops) > MAX_STOPS \
            or not all(isinstance(s, str) and 0 < len(s.encode()) <= MAX_STOP_BYTES
                       for s in stops):
        raise BadInstance(f"{where}: a string or a list of up to {MAX_STOPS} strings, each "
                          f"1 to {MAX_STOP_BYTES} bytes")
    return tuple(dict.fromkeys(s.encode("utf-8") for s in stops))


def _number(value: Any) -> bool:
    # An int is tested apart: math.isfinite() overflows on one too large for a float.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def prediction(generated: list[int], text_end: int | None = None) -> dict[str, Any]:
    """One instance's answer from the bytes generated for it; its text ends at `text_end`
    where a stop sequence began there."""
    text = bytes(generated[:text_end]).decode("utf-8", "replace")
    return {"text": text, "tokens": len(generated)}


def stop_start(generated: bytes | list[int], stops: tuple[bytes, ...]) -> int | None:
    """Where the stop sequence the generated bytes end with begins (the longest, where two
    do), or None. Checked after every byte, so a stop is found where it first ends."""
    tail = bytes(generated[-MAX_STOP_BYTES:])
    matched = [len(stop) for stop in stops if tail.endswith(stop)]
    return len(generated) - max(matched) if matched else None


def held_back(generated: bytes | list[int], stops: tuple[bytes, ...]) -> int:
    """How many of the last generated bytes a stream must hold back: the longest tail that
    could still become a stop sequence (streamed, it could not be taken back)."""
    tail = bytes(generated[-MAX_STOP_BYTES:])
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(tail)), longest, -1):
            if stop.startswith(tail[-n:]):
                longest = n
                break
    return longest


# --- KServe v2 tensors (the Triton path) -----------------------------------------------------

# The tensor names and types a generated Triton model repository declares, and its
# config's max_batch_size (Batching.max_batch_size): Triton refuses a request with more rows.
INPUT_NAME = "tokens"
INPUT_DATATYPE = "INT64"
OUTPUT_NAME = "logits"
OUTPUT_DATATYPE = "FP32"
MAX_BATCH = 32
PAD = 0


class BadAnswer(ValueError):
    """The server's answer is not the logits a Triton model repository declares."""


def request_body(contexts: list[list[int]]) -> bytes:
    """KServe v2 inference request for one step: every context right-padded to the longest
    (attention is causal: padding after a prompt's last byte never changes that byte's
    logits), row-major, as the repository's config.pbtxt declares `tokens`."""
    if not 1 <= len(contexts) <= MAX_BATCH:
        raise ValueError(f"a request holds 1 to {MAX_BATCH} rows, not {len(contexts)}")
    width = max(len(c) for c in contexts)
    data = [t for c in contexts for t in (*c, *([PAD] * (width - len(c))))]
    body = {"inputs": [{"name": INPUT_NAME, "datatype": INPUT_DATATYPE,
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
