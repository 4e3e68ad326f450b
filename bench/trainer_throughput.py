"""The trainer's tokens/s against a bare PyTorch loop of the same model and strategy.

    python -m bench.trainer_throughput [--steps 20] [--rounds 4] [--strategies ddp,fsdp,zero2]
    python -m bench.trainer_throughput --strategies tp2,pp2    # tensor / pipeline parallel
    python -m bench.trainer_throughput --strategies tp2xdp2,tp2xpp2   # combined, 4 processes

Starts two processes (world size 2, gloo on CPU, one torch thread each), or four for the
combined layouts (tp2xdp2: two tensor-parallel pairs, data-parallel over the pairs; tp2xpp2:
a two-stage pipeline of tensor-parallel pairs). In each process and for each strategy, rounds
alternate between:
- bare: the strategy's wrapped model, batches made up front, and nothing but forward,
  backward, clipping and the optimizer step (the DeepSpeed engine's backward/step for ZeRO);
- trainer: `Trainer.run()` as the CLI runs it (batches drawn per step, the per-step all-reduce
  of loss and stop flags, learning-rate schedule, JSON step events), checkpoints and evaluation
  off. Its step times are the intervals between its step events on stdout.
For tp2 (tensor parallel over both processes), pp2 (a two-stage 1F1B pipeline, 4
micro-batches a step) and the combined layouts the bare loop is the same parallel model
stepped by the strategy alone:
its forward and backward (the pipeline schedule's step for pp2), the tied-embedding gradient
sum, clipping by the global norm and the optimizer step, batches made up front.
The first steps of every round are warmup and not timed. Throughput = tokens per step / the
median step time over all rounds, by the wall clock and by rank 0's CPU time: on a shared
machine the wall clock also measures the neighbours' load, the CPU time only this process's
work (gloo waits for the other rank without spinning). Last, the trainer's own per-step work
(batch, all-reduce of loss and stop flags, step event) is timed alone, as a share of a step.
MFU (bench.mfu) is the trainer's tokens/s x model FLOPs per token (6 x parameters + attention)
over the devices' peak from the catalogue: "n/a (no GPU peak)" for these CPU processes.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stdout
from dataclasses import replace

from bench import mfu
from bench.machine import cpu_model

WARMUP = 5
# Large enough that a step is compute, as on a real job (~0.85M parameters, 4096 tokens a step).
MODEL = {"block_size": 128, "n_layer": 4, "n_head": 4, "n_embd": 128}
BATCH = 32
ZERO_STAGES = ("zero1", "zero2", "zero3")
# Tensor / pipeline parallel rows: the trainer settings each name stands for.
MESH = {
    "tp2": {"strategy": "ddp", "tp": 2},
    "pp2": {"strategy": "ddp", "pp": 2, "micro_batch_size": BATCH // 4},
    "tp2xdp2": {"strategy": "ddp", "tp": 2},
    "tp2xpp2": {"strategy": "ddp", "tp": 2, "pp": 2, "micro_batch_size": BATCH // 4},
}
# Processes per row: two, or four where a layout combines two parallel degrees of 2.
WORLD = {"tp2xdp2": 4, "tp2xpp2": 4}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--strategies", default="ddp,fsdp,zero2")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.strategies.split(","), args.steps, args.rounds)

    lines: list[dict] = []
    for world, names in by_world(args.strategies.split(",")).items():
        worker_args = ["--steps", str(args.steps), "--rounds", str(args.rounds),
                       "--strategies", ",".join(names)]
        found = run_workers(world, worker_args)
        if found is None:
            return 1
        lines += found
    report(lines)
    return 0


def by_world(names: list[str]) -> dict[int, list[str]]:
    """The rows grouped by the processes they run on, in the order asked."""
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(WORLD.get(name, 2), []).append(name)
    return groups


def run_workers(world: int, worker_args: list[str]) -> list[dict] | None:
    """Rank 0's JSON lines from ``world`` worker processes; None when one failed."""
    from config.ports import reserve_port

    port = str(reserve_port())
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env.setdefault("TORCH_EXTENSIONS_DIR", os.path.abspath("var/torch_extensions"))
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.trainer_throughput", "--worker", *worker_args],
            env={
                **env,
                "RANK": str(rank),
                "LOCAL_RANK": str(rank),
                "WORLD_SIZE": str(world),
                "LOCAL_WORLD_SIZE": str(world),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port,
            },
            stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for rank in range(world)
    ]
    try:
        out, _ = workers[0].communicate(timeout=1800)
        for process in workers[1:]:
            process.wait(timeout=60)
    finally:
        for process in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
    if workers[0].returncode:
        print(f"worker failed (exit {workers[0].returncode})", file=sys.stderr)
        return None
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def report(lines: list[dict]) -> None:
    results = [line for line in lines if "strategy" in line]
    own_work = {line["world"]: line["own_work_s"] for line in lines if "own_work_s" in line}
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs, no GPU; world size "
        f"{' and '.join(str(w) for w in sorted(own_work))} (gloo), 1 torch thread per process"
    )
    print(f"model: {MODEL}, global batch {BATCH} x {MODEL['block_size']} tokens")
    print("tokens per second of wall time, and per second of rank 0's CPU time (the latter is")
    print("what the code costs, whatever else the machine runs); MFU of the trainer's rate")
    print(f"{'strategy':<10} {'world':>5} {'clock':<5} {'bare':>10} {'trainer':>10} "
          f"{'ratio':>7}  MFU")
    for r in results:
        peak = mfu.device_peak(r["device"], r["precision"])
        for clock in ("wall", "cpu"):
            bare, trainer = r[clock]["bare"], r[clock]["trainer"]
            used = mfu.mfu_text(trainer, r["flops_per_token"], r["world"], peak)
            print(
                f"{r['strategy']:<10} {r['world']:>5} {clock:<5} {bare:>10,.0f} "
                f"{trainer:>10,.0f} {trainer / bare:>7.3f}  {used}"
            )
    print(f"model FLOPs per token: {results[0]['flops_per_token']:,} (6 x "
          f"{results[0]['params']:,} parameters + attention)" if results else "no rows")
    for world, seconds in sorted(own_work.items()):
        print(
            f"the trainer's own work per step (batch, all-reduce of loss and stop flags, event), "
            f"timed alone at world size {world}: {seconds * 1e3:.2f} ms"
        )
    for r in results:
        step_s = BATCH * MODEL["block_size"] / r["wall"]["bare"]
        own = own_work[r["world"]]
        print(
            f"  {r['strategy']}: {own / step_s:.2%} of a bare step ({step_s * 1e3:.0f} ms) "
            f"-> expected ratio {step_s / (step_s + own):.4f}"
        )


def worker(names: list[str], steps: int, rounds: int) -> int:
    import torch

    from trainers.config import ModelConfig
    from trainers.corpus import load_corpus
    from trainers.job import cluster
    from trainers.torch import distributed
    from trainers.torch.config import preset
    from trainers.torch.data import local_batch

    torch.set_num_threads(1)
    process = cluster.process_from_env(os.environ)
    _, device = distributed.init_process_group(process, timeout_s=300, device="cpu")
    total = WARMUP + steps
    for name in names:
        config = replace(
            preset("tiny"),
            **MESH.get(name, {"strategy": name}),
            model=ModelConfig(**MODEL),
            batch_size=BATCH,
            steps=total,
            eval_every=0,
            checkpoint_every=0,
            checkpoint_dir=None,
            model_dir=None,
        )
        corpus = load_corpus(None, config.corpus_max_bytes, config.model.block_size)
        # Data-parallel shards: tensor and pipeline parallel ranks share one. The mesh is
        # (pp, dp, tp), tp innermost: a rank's data-parallel index is (rank // tp) % dp.
        shards = process.world_size // (config.tp * config.pp)
        shard = (process.rank // config.tp) % shards if name in MESH else process.rank
        batches = [
            local_batch(corpus.train, config.seed, step, BATCH, config.model.block_size, shard,
                        shards)
            for step in range(1, total + 1)
        ]
        samples: dict[str, list[tuple[float, float]]] = {"bare": [], "trainer": []}
        for round_ in range(rounds):
            # Alternate which goes first, so neither always gets the warmer caches.
            order = ("bare", "trainer") if round_ % 2 == 0 else ("trainer", "bare")
            for kind in order:
                samples[kind] += RUNS[kind](config, process, device, batches)
        if process.rank == 0:
            print(json.dumps(row(name, config, process.world_size, samples)), flush=True)
        torch.distributed.barrier()
    overhead = own_work_seconds(config, process, corpus)
    if process.rank == 0:
        print(json.dumps({"own_work_s": overhead, "world": process.world_size}), flush=True)
    distributed.destroy_process_group()
    return 0


def row(name: str, config, world: int, samples: dict[str, list[tuple[float, float]]]) -> dict:
    """One row's tokens/s by both clocks, with what its MFU needs."""
    from trainers.torch.model import GPT

    tokens = BATCH * config.model.block_size
    rates = {
        clock: {
            kind: tokens / statistics.median(sample[i] for sample in values)
            for kind, values in samples.items()
        }
        for i, clock in enumerate(("wall", "cpu"))
    }
    params = GPT(config.model, seed=config.seed).num_parameters()
    shape = config.model
    flops = mfu.model_flops_per_token(params, shape.n_layer, shape.n_head, shape.n_embd,
                                      shape.block_size)
    # These processes run on CPU (CUDA_VISIBLE_DEVICES is empty): no device name, no peak.
    return {"strategy": name, "world": world, **rates, "params": params,
            "flops_per_token": flops, "device": None, "precision": config.precision}


def own_work_seconds(config, process, corpus, samples: int = 300) -> float:
    """Median seconds of what a trainer step adds to forward, backward and optimizer step:
    drawing this rank's batch, the learning rate, the all-reduce of loss and stop flags (and
    reading it back), the step event. Timed alone, it does not drown in the load of others."""
    import torch
    import torch.distributed as dist

    from trainers import events
    from trainers.loop import lr_at
    from trainers.torch.data import local_batch

    times = []
    for step in range(1, samples + 1):
        started = time.perf_counter()
        local_batch(
            corpus.train,
            config.seed,
            step,
            BATCH,
            config.model.block_size,
            process.rank,
            process.world_size,
        )
        lr_at(step, config)
        stats = torch.tensor([4.2, 0.0, 0.0, 0.0], dtype=torch.float64)
        dist.all_reduce(stats)
        stats.tolist()
        with redirect_stdout(io.StringIO()):
            events.step(step, samples, 4.2, 1e-3, 1.0, 1.0)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run_bare(config, process, device, batches) -> list[tuple[float, float]]:
    from trainers.torch import strategies
    from trainers.torch.model import GPT

    strategy = strategies.create(config, process, device)
    model, optimizer = strategy.setup(GPT(config.model, seed=config.seed))
    if config.tp * config.pp > 1:
        return mesh_loop(strategy, model, optimizer, batches, config)
    deepspeed = config.strategy in ZERO_STAGES
    return bare_loop(model, optimizer, batches, deepspeed, config)


def mesh_loop(strategy, model, optimizer, batches, config) -> list[tuple[float, float]]:
    """The tensor/pipeline parallel model stepped by its strategy alone (see the docstring)."""
    from trainers.loop import lr_at
    from trainers.torch.optim import set_lr

    times = []
    for step, (x, y) in enumerate(batches, start=1):
        set_lr(optimizer, lr_at(step, config))
        loss = strategy.forward_backward(model, x, y)
        strategy.optimizer_step(model, optimizer)
        loss.item()
        times.append(clocks())
    return intervals(times[WARMUP - 1 :])


def run_trainer(config, process, device, batches) -> list[tuple[float, float]]:
    from trainers.job.preemption import StopRequest
    from trainers.torch.trainer import Trainer

    capture = TimedLines()
    with redirect_stdout(capture):
        Trainer(config, process, device, StopRequest()).run()
    return capture.step_seconds(WARMUP)


def bare_loop(model, optimizer, batches, deepspeed: bool, config) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each step after the warmup. The learning rate follows the trainer's
    schedule: the same arithmetic on both sides (the step time depends on the weights' values
    a little, e.g. through denormal floats)."""
    import torch

    from trainers.loop import lr_at
    from trainers.torch.optim import set_lr

    times = []
    for step, (x, y) in enumerate(batches, start=1):
        set_lr(optimizer, lr_at(step, config))
        _, loss = model(x, y)
        if deepspeed:
            model.backward(loss)
            model.step()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        loss.item()  # the step is done (the trainer too reads its loss every step)
        times.append(clocks())
    return intervals(times[WARMUP - 1 :])


RUNS = {"bare": run_bare, "trainer": run_trainer}


class TimedLines(io.StringIO):
    """stdout that remembers when each step event was printed."""

    def __init__(self) -> None:
        super().__init__()
        self.step_times: dict[int, tuple[float, float]] = {}

    def write(self, text: str) -> int:
        now = clocks()
        for line in text.splitlines():
            if line.startswith("{"):
                event = json.loads(line)
                if event.get("event") == "step":
                    self.step_times[event["step"]] = now
        return len(text)

    def step_seconds(self, after: int) -> list[tuple[float, float]]:
        """(wall, CPU) seconds between consecutive step events after step `after` (rank 0)."""
        return intervals([self.step_times[s] for s in sorted(self.step_times) if s >= after])


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def intervals(times: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(times)]


if __name__ == "__main__":
    sys.exit(main())
