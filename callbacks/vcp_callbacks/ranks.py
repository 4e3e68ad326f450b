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


class RankTimes:
    """A loop's per-rank step times, for callbacks that see each step on every rank (all four:
    HF Trainer, Lightning, the Accelerate tracker, the DeepSpeed reporter): `stepped` on every
    rank at every step
    (every `every` steps it gathers each rank's mean since the last gather, a collective the
    ranks reach at the same step count), `taken` on the rank that prints the step event."""

    def __init__(self, every: int) -> None:
        if every < 1:
            raise ValueError("rank_times_every must be 1 or more")
        self.every = every
        self._since_gather: list[float] = []
        # This rank's own since the last step event, as a sum and a count: only rank 0 prints
        # (and resets) them, the others would otherwise keep every step's.
        self._sum, self._count = 0.0, 0
        self._gathered: list[float] | None = None

    def stepped(self, steps: int, seconds: float, world_size: int) -> None:
        self._since_gather.append(seconds)
        self._sum, self._count = self._sum + seconds, self._count + 1
        if steps % self.every == 0:
            own = sum(self._since_gather) / len(self._since_gather)
            self._gathered, self._since_gather = gathered(own, world_size), []

    def taken(self) -> dict[str, Any]:
        """The step event's timing fields since the last one: this rank's mean step time and,
        when gathered since, every rank's."""
        fields: dict[str, Any] = {}
        if self._count:
            fields["step_time_s"] = self._sum / self._count
        if self._gathered:
            fields["rank_step_time_s"] = self._gathered
        self._sum, self._count, self._gathered = 0.0, 0, None
        return fields
