"""The learning-rate schedule (linear warmup, then cosine decay), shared by every trainer."""

from __future__ import annotations

import math
from typing import Protocol


class ScheduleConfig(Protocol):
    lr: float
    min_lr_ratio: float
    warmup_steps: int
    steps: int


def lr_at(step: int, config: ScheduleConfig) -> float:
    """Learning rate for optimizer step `step` (1-based). A pure function of the step, so a
    resumed run needs no scheduler state."""
    if config.warmup_steps and step <= config.warmup_steps:
        return config.lr * step / config.warmup_steps
    min_lr = config.lr * config.min_lr_ratio
    span = max(1, config.steps - config.warmup_steps)
    progress = min(1.0, (step - config.warmup_steps) / span)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (config.lr - min_lr)
