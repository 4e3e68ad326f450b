"""Activation checkpointing as a job asks for it: none, selective (the attention core
recomputed) or full (each block recomputed), what the memory plan says of each, and the reading
of older requests' true/false. The memory plan (memory.py), the expected step time, the composer
and the API read the mode here.
"""

from __future__ import annotations

CHECKPOINTING = ("none", "selective", "full")
CHECKPOINTING_NOTES = {
    "selective": "selective activation checkpointing: the attention scores, softmax and "
                 "dropout (5as/h of each layer's 34 + 5as/h) are recomputed in backward, the "
                 "rest kept",
    "full": "full activation checkpointing: each layer keeps only its input (2sbh) and is "
            "recomputed in backward, one layer's activations at a time",
}


def checkpointing_mode(value: object) -> str:
    """A request's activation_checkpointing as a mode. Requests from before there were modes
    said true (every layer recomputed: full) or false (none)."""
    if value is None or value is False or value == "":
        return "none"
    if value is True:
        return "full"
    if isinstance(value, str) and value in CHECKPOINTING:
        return value
    raise ValueError(f"model.activation_checkpointing must be one of {', '.join(CHECKPOINTING)}"
                     f", not {value!r}")
