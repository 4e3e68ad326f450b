"""Parallelism degrees, checked against the world size before any process group exists.

As in torchtitan's `ParallelDims`, each degree is a config field and their product must equal
WORLD_SIZE: dp (data parallel: DDP replicas, FSDP shards, ZeRO partitions), tp (tensor
parallel) and pp (pipeline parallel). dp = 0 means "whatever tp and pp leave". This trainer
trains with tp = pp = 1 only; other degrees are refused with a message rather than ignored,
so a job composed for tensor parallelism never silently trains as plain data parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

IMPLEMENTED = {"tp": 1, "pp": 1}


@dataclass(frozen=True)
class ParallelDims:
    dp: int
    tp: int
    pp: int

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp


def resolve_dims(dp: int, tp: int, pp: int, world_size: int) -> ParallelDims:
    """The degrees for this world size, or a ValueError that says what to change."""
    for name, value in (("tp", tp), ("pp", pp)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, not {value}")
    if dp < 0:
        raise ValueError(f"dp must be >= 1 (or 0 for WORLD_SIZE / (tp x pp)), not {dp}")
    if dp == 0:
        if world_size % (tp * pp):
            raise ValueError(
                f"WORLD_SIZE {world_size} is not a multiple of tp {tp} x pp {pp} = {tp * pp}: "
                "change tp/pp or the number of processes"
            )
        dp = world_size // (tp * pp)
    dims = ParallelDims(dp, tp, pp)
    if dims.world_size != world_size:
        raise ValueError(
            f"dp {dp} x tp {tp} x pp {pp} = {dims.world_size}, but WORLD_SIZE is {world_size}: "
            "the degrees must multiply to the number of processes (dp=0 derives dp)"
        )
    for name, supported in IMPLEMENTED.items():
        value = getattr(dims, name)
        if value != supported:
            kind = "tensor" if name == "tp" else "pipeline"
            raise ValueError(
                f"{kind} parallelism ({name}={value}) is not implemented by this trainer: "
                f"only tp=1 and pp=1 train; use dp (ddp, fsdp, zero1/2/3) across all "
                f"{world_size} processes"
            )
    return dims


def hybrid_mesh_shape(dp: int, shard_size: int, local_world_size: int) -> tuple[int, int]:
    """(replicas, shards per replica) of a hybrid_shard mesh."""
    shard = shard_size or local_world_size
    if shard < 1 or dp % shard:
        raise ValueError(
            f"fsdp hybrid_shard: shard size {shard} must divide the data-parallel size {dp} "
            "(set fsdp.shard_size; 0 = processes per node)"
        )
    return dp // shard, shard
