"""Parallelism degrees, checked against the world size before any process group exists.

As in torchtitan's `ParallelDims`, each degree is a config field and their product must equal
WORLD_SIZE: dp (data parallel: DDP replicas, FSDP shards, ZeRO partitions), tp (tensor
parallel) and pp (pipeline parallel). dp = 0 means "whatever tp and pp leave".
`model_fit_problems` checks the degrees against the model (heads split by tp, layers by the
pipeline's stages, micro-batches by the schedule) before anything starts.
"""

from __future__ import annotations

from dataclasses import dataclass

# Pipeline schedules by name (torch.distributed.pipelining) and whether they run several
# stages per pipeline rank.
PP_SCHEDULES = {"gpipe": False, "1f1b": False, "interleaved_1f1b": True}


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
    return dims


def pipeline_microbatches(
    dims: ParallelDims, virtual_stages: int, rank_batch: int, micro_batch_size: int
) -> int:
    """How many micro-batches one rank's batch is cut into on its way through the pipeline."""
    if micro_batch_size:
        return rank_batch // micro_batch_size
    return dims.pp * virtual_stages  # one per stage: the least that fills a 1F1B pipeline


def model_fit_problems(
    dims: ParallelDims,
    *,
    n_head: int,
    n_layer: int,
    vocab_size: int,
    block_size: int,
    schedule: str,
    virtual_stages: int,
    sequence_parallel: bool,
    rank_batch: int,
    micro_batch_size: int,
) -> list[str]:
    """What keeps this model from being split by these degrees, each with what to change."""
    problems = []
    tp, pp = dims.tp, dims.pp
    if n_head % tp:
        problems.append(
            f"tp {tp} must divide model.n_head {n_head} (each tensor-parallel rank computes "
            f"whole attention heads): use tp in {_divisors(n_head)}"
        )
    if vocab_size % tp:
        problems.append(
            f"tp {tp} must divide model.vocab_size {vocab_size} (the embedding and the loss are "
            f"split by vocabulary): use tp in {_divisors(vocab_size)}"
        )
    if sequence_parallel and tp == 1:
        problems.append("sequence_parallel splits the tensor-parallel ranks' work: it needs tp > 1")
    if sequence_parallel and block_size % tp:
        problems.append(
            f"sequence_parallel: tp {tp} must divide model.block_size {block_size}: "
            f"use tp in {_divisors(block_size)} or drop sequence_parallel"
        )
    if schedule not in PP_SCHEDULES:
        problems.append(f"pp_schedule {schedule!r}: use one of {', '.join(PP_SCHEDULES)}")
        return problems
    if virtual_stages < 1:
        problems.append(f"pp_virtual_stages must be >= 1, not {virtual_stages}")
        return problems
    if PP_SCHEDULES[schedule] != (virtual_stages > 1):
        problems.append(
            f"pp_schedule {schedule} runs "
            + ("2 or more stages" if PP_SCHEDULES[schedule] else "one stage")
            + f" per pipeline rank, but pp_virtual_stages is {virtual_stages}: "
            + (
                "set pp_virtual_stages=2 (or more)"
                if PP_SCHEDULES[schedule]
                else "use pp_schedule=interleaved_1f1b or pp_virtual_stages=1"
            )
        )
    if pp == 1:
        if virtual_stages > 1:
            problems.append("pp_virtual_stages applies to pipeline parallelism: it needs pp > 1")
        return problems
    stages = pp * virtual_stages
    if n_layer % stages:
        problems.append(
            f"model.n_layer {n_layer} must be a multiple of pp {pp} x pp_virtual_stages "
            f"{virtual_stages} = {stages} pipeline stages: change pp, pp_virtual_stages or the "
            f"layer count (pp x stages per rank in {_divisors(n_layer)})"
        )
    if rank_batch:
        micro = micro_batch_size or rank_batch // stages
        if micro < 1 or rank_batch % micro or (not micro_batch_size and rank_batch % stages):
            problems.append(
                f"the per-rank batch {rank_batch} cannot be cut into micro-batches of "
                f"{micro_batch_size or 'batch / stages'} sequences: set micro_batch_size to a "
                f"divisor of {rank_batch}"
            )
        else:
            count = pipeline_microbatches(dims, virtual_stages, rank_batch, micro_batch_size)
            if schedule != "gpipe" and count < stages:
                problems.append(
                    f"pp_schedule {schedule} needs at least as many micro-batches as pipeline "
                    f"stages ({stages}), but micro_batch_size {micro} gives {count}: use a "
                    f"micro_batch_size of at most {rank_batch // stages}"
                )
            if schedule == "interleaved_1f1b" and count % pp:
                problems.append(
                    f"interleaved_1f1b runs micro-batches in rounds of pp {pp}: the "
                    f"{count} micro-batches must be a multiple of {pp}"
                )
    return problems


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


def hybrid_mesh_shape(dp: int, shard_size: int, local_world_size: int) -> tuple[int, int]:
    """(replicas, shards per replica) of a hybrid_shard mesh."""
    shard = shard_size or local_world_size
    if shard < 1 or dp % shard:
        raise ValueError(
            f"fsdp hybrid_shard: shard size {shard} must divide the data-parallel size {dp} "
            "(set fsdp.shard_size; 0 = processes per node)"
        )
    return dp // shard, shard
