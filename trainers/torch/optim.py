"""AdamW, and setting the learning rate of each step (trainers/loop.py's schedule) on it."""

from __future__ import annotations

import torch
from torch import nn

from trainers.config import RunConfig


def build_optimizer(model: nn.Module, config: RunConfig) -> torch.optim.AdamW:
    """Weight decay on matrices only: biases, norms and the 1-d parameters are not decayed."""
    decay = [p for p in model.parameters() if p.requires_grad and _dims(p) >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and _dims(p) < 2]
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(config.beta1, config.beta2))


def _dims(param: nn.Parameter) -> int:
    # A parameter ZeRO-3 partitioned as it was made (zero.Init) is an empty 1-d tensor here;
    # DeepSpeed keeps its real shape beside it.
    return len(getattr(param, "ds_shape", param.shape))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
