"""Instances in, text out: generating bytes for many prediction instances at once.

Instances and predictions are the contract's (contract/prediction.py): an instance is a prompt
with its max_tokens, temperature and seed, parsed there for every runtime alike; a prediction
is {"text": the generated continuation, "tokens": how many bytes were generated}.

Generation runs every active sequence of a batch through the model together: each is cropped to
the last block_size bytes and right-padded to the longest. Attention is causal, so padding after
a sequence's last byte never changes that byte's logits, and each sequence keeps positions from
0 as in training.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from contract.prediction import Instance, prediction
from trainers.torch.model import GPT


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
                results[i] = prediction(generated[i])
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
