"""Instances in, text out: generating bytes for many prediction instances at once.

Instances and predictions are the contract's (contract/prediction.py): an instance is a prompt
with its max_tokens, temperature, top_p, seed and stop sequences, parsed there for every
runtime alike; a prediction is {"text": the generated continuation, "tokens": how many bytes
were generated}.

Every instance runs in one decoder (decoding.py): prefilled into the KV cache, then one byte
per step for all of them together, each leaving as soon as it is done. `cache=False` runs the
no-cache path instead (every step the whole context again), which greedy decoding with the
cache equals exactly; the server's continuous batching drives the same decoder
(batcher.ContinuousBatcher).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import nn

from contract.prediction import Instance
from trainers.serving import decoding


def generate(
    model: nn.Module,
    instances: Sequence[Instance],
    on_done: Callable[[int, dict[str, Any]], None] | None = None,
    cache: bool = True,
) -> list[dict[str, Any]]:
    """Continue every instance; `on_done(i, prediction)` fires as soon as instance i is done,
    so a short request batched with a long one need not wait for it."""
    decoder = decoding.Decoder(model, slots=max(1, len(instances)), cache=cache)
    sequences = [decoding.Sequence(instance) for instance in instances]
    for sequence in sequences:
        decoder.join(sequence)
    index = {id(s): i for i, s in enumerate(sequences)}
    while not decoder.idle:
        for sequence in decoder.step():
            if on_done is not None:
                on_done(index[id(sequence)], sequence.answer())
    return [s.answer() for s in sequences]
