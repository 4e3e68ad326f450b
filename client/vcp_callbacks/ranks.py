"""What every callback shares: a reported value as a number, and each rank's own step time
gathered across the run's processes. The training process's side (it imports torch there, and
only there); the control plane, its API client and `vcp` never import this package
(pyproject.toml's import contracts)."""

from __future__ import annotations

from typing import Any


def number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def gathered(own: float, world_size: int) -> list[float]:
    """Each rank's mean own step time, rank 0 first (a collective: every rank calls it at the
    same step); this rank's alone when the run is one process."""
    import torch
    import torch.distributed as dist

    if world_size <= 1 or not (dist.is_available() and dist.is_initialized()):
        return [own]
    # A plain tensor all_gather (on the backend's own device), not all_gather_object: no
    # pickling, and no object collective's extra state alive when the process ends.
    device = torch.device("cuda", torch.cuda.current_device()) \
        if dist.get_backend() == "nccl" else torch.device("cpu")
    mine = torch.tensor([own], dtype=torch.float64, device=device)
    everyone = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    return [float(t.item()) for t in everyone]
