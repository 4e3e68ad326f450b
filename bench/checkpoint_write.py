"""Checkpoint write speed against a raw sequential write of the same bytes to the same disk, and
the largest model whose checkpoint fits in a spot VM's 30 s preemption notice at that speed.

    python -m bench.checkpoint_write [--dir var/bench-checkpoints] [--rounds 3]

One process (world size 1, CPU). A GPT of about 25M parameters takes one optimizer step (so
AdamW has its two moment tensors), then is checkpointed the way the trainer does it: the
CheckpointManager's temp folder, the strategy's files, fsync'd, COMMITTED marker, rename; timed
to the commit. `ddp` writes model.pt + optimizer.pt with torch.save; `fsdp` writes through
torch.distributed.checkpoint. The raw write is the same number of bytes from memory to one
file, in 8 MiB chunks, then fsync. Rounds alternate checkpoint and raw write; the rates are
medians, the ratio the median of each checkpoint against the raw write that followed it.

A checkpoint holds 12 bytes per parameter (fp32 weights and AdamW's exp_avg and exp_avg_sq),
so the largest model saved within the notice is rate x 30 s / 12 B. With a sharded strategy
every rank writes 12 B x parameters / ranks, so on storage whose bandwidth grows with the
number of writers (one disk per VM, or GCS) the figure grows with the number of ranks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from dataclasses import replace

NOTICE_S = 30.0
BYTES_PER_PARAM = 12  # fp32 weights + AdamW exp_avg + exp_avg_sq
MODEL = {"block_size": 256, "n_layer": 8, "n_head": 8, "n_embd": 512}
CHUNK = 8 * 1024 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="var/bench-checkpoints", help="on the disk to measure")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--strategies", default="ddp,fsdp")
    parser.add_argument("--layers", type=int, default=MODEL["n_layer"], help="model size (8: 25M)")
    args = parser.parse_args()

    import torch

    from bench.machine import cpu_model
    from trainers.job.cluster import Process
    from trainers.torch import distributed

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    os.makedirs(args.dir, exist_ok=True)
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; writing under {args.dir}")
    one = Process(0, 1, 0, 1, "127.0.0.1", 0, "single")
    distributed.init_process_group(one, timeout_s=600, device="cpu")
    try:
        for name in args.strategies.split(","):
            measure(name, one, args.dir, args.rounds, args.layers)
    finally:
        distributed.destroy_process_group()
        shutil.rmtree(args.dir, ignore_errors=True)
    return 0


def measure(name: str, process, root: str, rounds: int, layers: int) -> None:
    from trainers.config import ModelConfig
    from trainers.torch import strategies
    from trainers.torch.checkpoints import CheckpointManager, skip_zip_crc32
    from trainers.torch.config import preset
    from trainers.torch.model import GPT

    config = replace(
        preset("tiny"),
        strategy=name,
        model=ModelConfig(**{**MODEL, "n_layer": layers}),
        batch_size=1,
        grad_clip=0.0,
    )

    strategy = strategies.create(config, process, "cpu")
    model, optimizer = strategy.setup(GPT(config.model, seed=0))
    params = sum(p.numel() for p in model.parameters())
    step_once(model, optimizer, config.model.block_size)
    skip_zip_crc32()  # as the trainer does

    folder = os.path.join(root, name)
    # keep=0: pruning older checkpoints happens after the commit, so it is not timed here.
    manager = CheckpointManager(folder, keep=0, rank=0, world_size=1)
    checkpoint_s, raw_s, size = [], [], 0
    for step in range(1, rounds + 1):  # alternating, as the disk is shared with others
        started = time.perf_counter()
        info = manager.save(
            step,
            lambda storage, path: strategy.save(storage, path, model, optimizer),
            {"strategy": name},
        )
        checkpoint_s.append(time.perf_counter() - started)
        size = info.metadata["bytes"]
        shutil.rmtree(info.path)
        raw_s.append(raw_write(os.path.join(root, "raw.bin"), size))

    mb = size / 1e6
    rate, raw_rate = mb / statistics.median(checkpoint_s), mb / statistics.median(raw_s)
    # Each checkpoint against the raw write right after it: the disk is shared, and a pair of
    # neighbours sees the same neighbours' load.
    ratio = statistics.median(r / c for c, r in zip(checkpoint_s, raw_s, strict=True))
    largest = rate * 1e6 * NOTICE_S / BYTES_PER_PARAM
    print(
        f"{name}: {params / 1e6:.1f}M parameters, checkpoint {mb:.0f} MB "
        f"({size / params:.1f} B/parameter): {rate:,.0f} MB/s; raw sequential write "
        f"{raw_rate:,.0f} MB/s; ratio {ratio:.2f}; largest model saved within "
        f"{NOTICE_S:.0f} s at this rate: {largest / 1e9:.2f}B parameters"
    )


def step_once(model, optimizer, block_size: int) -> None:
    """One optimizer step, so AdamW holds its moment tensors (as in any real checkpoint)."""
    import torch

    x = torch.randint(0, 256, (1, block_size))
    _, loss = model(x, x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def raw_write(path: str, size: int) -> float:
    """Seconds to write `size` bytes sequentially from memory and fsync them."""
    chunk = os.urandom(CHUNK)
    started = time.perf_counter()
    with open(path, "wb") as f:
        left = size
        while left > 0:
            left -= f.write(chunk[: min(left, CHUNK)])
        f.flush()
        os.fsync(f.fileno())
    seconds = time.perf_counter() - started
    os.remove(path)
    return seconds


if __name__ == "__main__":
    sys.exit(main())
