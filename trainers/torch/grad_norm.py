"""Gradient clipping by the global norm when the gradients are spread over a device mesh.

`torch.nn.utils.clip_grad_norm_` sees one rank's parameters. Under tensor parallelism some of
those are shards (DTensors) and some whole copies (plain tensors, identical on every
tensor-parallel rank); under FSDP shards over dp as well; under pipeline parallelism each rank
holds other layers. The global norm sums every shard's squares once: over the mesh dimensions a
gradient is sharded on, then over the pipeline ranks, leaving out the last stage's copy of the
tied embedding (the first stage counts it). The clip coefficient is torch's:
max_norm / (norm + 1e-6), at most 1.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.tensor import DTensor


@torch.no_grad()
def match_gradient_placements(params: Iterable[nn.Parameter]) -> None:
    """Give each DTensor gradient its parameter's placements. Some arrive otherwise: a
    replicated norm used on sequence shards gets partial sums (summed here), a vocabulary-
    sharded embedding a whole gradient (each rank keeps its rows here, no communication)."""
    for param in params:
        grad = param.grad
        if isinstance(grad, DTensor) and tuple(grad.placements) != tuple(param.placements):
            param.grad = grad.redistribute(param.device_mesh, param.placements)


@torch.no_grad()
def clip_grad_norm(
    params: Iterable[nn.Parameter],
    max_norm: float,
    pp_group: dist.ProcessGroup | None,
    counted_elsewhere: set[nn.Parameter],
) -> torch.Tensor:
    """Scale the gradients in place so their global norm is at most `max_norm`; returns the
    norm before clipping (the same value on every rank)."""
    # Squares summed per (mesh, the mesh dimensions the gradient is sharded on): each sum is
    # then reduced over those dimensions' groups. The ranks of a group hold the same layers,
    # so they meet the same keys in the same order.
    squares: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}
    groups: dict[tuple[int, tuple[int, ...]], list[dist.ProcessGroup]] = {}
    local_grads: list[torch.Tensor] = []
    device = None
    for param in params:
        grad = param.grad
        if grad is None:
            continue
        if isinstance(grad, DTensor):
            if any(p.is_partial() for p in grad.placements):
                raise RuntimeError("partial gradients: call match_gradient_placements first")
            mesh = grad.device_mesh
            # Anything neither whole nor partial is a split (Shard, and FSDP-over-TP's
            # _StridedShard, which is_shard() does not own up to).
            sharded = [
                i for i, p in enumerate(grad.placements) if not (p.is_replicate() or p.is_partial())
            ]
            key = (id(mesh), tuple(sharded))
            groups.setdefault(key, [mesh.get_group(i) for i in sharded])
            local = grad.to_local()
        else:
            key = (0, ())
            groups.setdefault(key, [])
            local = grad
        local_grads.append(local)
        device = local.device
        if param in counted_elsewhere:
            continue
        square = local.float().pow(2).sum()
        squares[key] = squares[key] + square if key in squares else square
    if device is None:
        return torch.zeros(())
    total = torch.zeros((), dtype=torch.float32, device=device)
    for key, square in squares.items():
        for group in groups[key]:
            dist.all_reduce(square, group=group)
        total += square
    if pp_group is not None:
        dist.all_reduce(total, group=pp_group)
    norm = total.sqrt()
    coefficient = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    torch._foreach_mul_(local_grads, coefficient.to(local_grads[0].dtype))
    return norm
