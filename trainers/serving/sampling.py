"""Choosing the next byte from its logits: greedy at temperature 0, else a draw from
softmax(logits / temperature), cut to the top-p nucleus first where top_p < 1.

A seeded instance draws from its own torch generator, so its answer repeats whatever else is
in the batch; at top_p 1 the draw is the one the server made before top_p existed.
"""

from __future__ import annotations

import torch


def choose(logits: torch.Tensor, temperature: float, top_p: float,
           generator: torch.Generator | None) -> int:
    if temperature == 0.0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        probs = nucleus(probs, top_p)
    return int(torch.multinomial(probs, 1, generator=generator))


def nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """The probabilities of the fewest most likely bytes that reach top_p together (the one
    that crosses it included), the others zero; multinomial renormalises."""
    ordered, order = torch.sort(probs, descending=True)
    before = torch.cumsum(ordered, dim=-1) - ordered  # the mass of the likelier bytes
    ordered = torch.where(before < top_p, ordered, torch.zeros_like(ordered))
    return torch.zeros_like(probs).scatter(-1, order, ordered)
