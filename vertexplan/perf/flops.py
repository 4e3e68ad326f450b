"""Model FLOPs per token, as PaLM (appendix B) and nanoGPT's estimate_mfu count them.

A training step costs 6 FLOPs per parameter per token (2 forward, 4 backward) plus the
attention scores and their weighted sum, which have no parameters: 12 * L * H * Q * T per
token (L layers, H heads of Q dimensions, context T). Recomputation (activation checkpointing)
is not counted: MFU, unlike hardware FLOPs utilisation, counts only the model's own work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# run_started's fields for the model's shape (trainers/events.py), with what each means.
SHAPE_FIELDS = {
    "params": "parameter count",
    "n_layer": "layers",
    "n_head": "attention heads",
    "d_model": "model width",
    "seq_len": "sequence length",
}


@dataclass(frozen=True)
class ModelShape:
    params: int
    n_layer: int
    n_head: int
    d_model: int
    seq_len: int

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head


def flops_per_token(shape: ModelShape) -> int:
    """6N + 12 * L * H * Q * T: one training token's forward and backward FLOPs."""
    return (6 * shape.params
            + 12 * shape.n_layer * shape.n_head * shape.head_dim * shape.seq_len)


def shape_from_event(fields: Mapping[str, Any]) -> ModelShape | str:
    """The model's shape from a run_started event's fields, or which of them are missing."""
    values: dict[str, int] = {}
    missing = []
    for name, meaning in SHAPE_FIELDS.items():
        value = fields.get(name)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            missing.append(f"{name} ({meaning})")
        else:
            values[name] = value
    if missing:
        return "run_started does not report the model's " + ", ".join(missing)
    if values["d_model"] % values["n_head"]:
        return (f"run_started reports d_model {values['d_model']} not divisible by n_head "
                f"{values['n_head']}")
    return ModelShape(**values)
