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

import math
import random

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
