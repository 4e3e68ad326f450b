"""Activation checkpointing under sharded and model-parallel strategies, in ONE group of processes.

    python -m tests.trainers.checkpointing_group SPEC.json     (one process per rank, RANK etc. set)

SPEC is {"steps": N, "runs": [{"name": ..., "args": [trainer CLI args]}, ...]}. Each run reads
its configuration through the trainer's own CLI (`--activation-checkpointing` included), builds
the strategy and the model as the trainer does, measures the activation memory of one forward
pass (tests/trainers/activation_memory.py) where there is no pipeline, then trains N steps on a
fixed batch. Rank 0 prints one `measured` line per run: the losses and the bytes.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.distributed as dist

from tests.trainers.activation_memory import forward_activation_bytes
from trainers.job import cluster
from trainers.torch import distributed, strategies, tensor_parallel
from trainers.torch.main import build_parser, config_from_args
from trainers.torch.model import GPT
from trainers.torch.validation import validate


def run(args: list[str], steps: int, process: cluster.Process, device: str) -> dict:
    config = config_from_args(build_parser().parse_args(args), os.environ)
    validate(config, process.world_size)
    strategy = strategies.create(config, process, device)
    wrapped, optimizer = strategy.setup(GPT(config.model, seed=config.seed))
    gen = torch.Generator().manual_seed(config.seed)
    shard, shards = strategy.data_shard()
    tokens = torch.randint(0, config.model.vocab_size, (config.batch_size, 65), generator=gen)
    rows = tokens.chunk(shards)[shard]
    x, y = rows[:, :-1], rows[:, 1:]
    memory = None
    parts = getattr(strategy, "parts", [wrapped])
    if len(parts) == 1 and config.pp == 1:
        with tensor_parallel.loss_context(config.tp):
            memory, _ = forward_activation_bytes(lambda: parts[0](x, y))
    losses = []
    for _ in range(steps):
        loss = strategy.forward_backward(wrapped, x, y)
        strategy.optimizer_step(wrapped, optimizer)
        dist.all_reduce(loss)
        losses.append(loss.item() / process.world_size)
    return {"losses": losses, "activation_bytes": memory}


def main(spec_path: str) -> int:
    with open(spec_path) as f:
        spec = json.load(f)
    torch.set_num_threads(1)
    process = cluster.process_from_env(os.environ)
    _, device = distributed.init_process_group(process, timeout_s=60, device="cpu")
    try:
        for case in spec["runs"]:
            result = run(case["args"], spec["steps"], process, device)
            if process.rank == 0:
                print(json.dumps({"event": "measured", "name": case["name"], **result}),
                      flush=True)
            dist.barrier()
    finally:
        distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
