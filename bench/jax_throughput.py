"""The JAX trainer's steps/s against a bare `jax.jit` loop of the same model on the same mesh.

    python -m bench.jax_throughput [--devices 8] [--mesh 2,2,2] [--steps 20] [--rounds 4]

One worker process with `--devices` CPU devices (XLA_FLAGS=--xla_force_host_platform_device_
count). Rounds alternate between:
- bare: the compiled training step of trainers/jax/program.py (the same model, AdamW and
  shardings), batches placed on the devices up front, learning rates computed up front, and
  nothing else: the host dispatches step after step and waits once, at the end;
- trainer: `JaxTrainer.run()` as `python -m trainers.jax` runs it (each step's batch drawn and
  placed, the schedule, the stop check, every loss read back and printed as a JSON step event),
  checkpoints and evaluation off. Its step times are the intervals between its step events.
The first steps of each round are warmup (compilation included) and not timed. Throughput is
steps per second from the median over rounds, by the wall clock and by the worker's CPU time
(XLA's threads included): on a shared machine the wall clock also measures the neighbours.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace

from bench.machine import cpu_model

WARMUP = 5
# Large enough that a step is compute, as on a real job (~0.85M parameters, 4096 tokens a step).
MODEL = {"block_size": 128, "n_layer": 4, "n_head": 4, "n_embd": 128}
BATCH = 32
GOAL = 0.95


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8, help="CPU devices of the worker")
    parser.add_argument("--mesh", default="2,2,2", help="data,fsdp,tensor")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.mesh, args.steps, args.rounds)

    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={args.devices}",
        "JAX_COMPILATION_CACHE_DIR": os.path.abspath("var/jax-compile-cache"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.jax_throughput", "--worker", *sys.argv[1:]],
        env=env, capture_output=True, text=True, timeout=1800,
    )
    if done.returncode:
        print(f"worker failed (exit {done.returncode}):\n{done.stderr[-3000:]}", file=sys.stderr)
        return 1
    result = json.loads(done.stdout.strip().splitlines()[-1])
    report(result, args)
    return 0


def report(result: dict, args: argparse.Namespace) -> None:
    import jax

    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, no accelerator; jax {jax.__version__} "
          f"on {args.devices} CPU devices, mesh (data, fsdp, tensor) = ({args.mesh}), fp32")
    print(f"model: {MODEL}, global batch {BATCH} x {MODEL['block_size']} tokens; "
          f"{args.rounds} rounds of {args.steps} timed steps after {WARMUP} warmup")
    print("steps per second, and per second of the worker's CPU time (what the code costs, "
          "whatever else the machine runs)")
    print(f"{'clock':<5} {'bare jit':>10} {'trainer':>10} {'ratio':>7}   goal >= {GOAL}")
    for clock in ("wall", "cpu"):
        bare, trainer = result[clock]["bare"], result[clock]["trainer"]
        print(f"{clock:<5} {bare:>10.2f} {trainer:>10.2f} {trainer / bare:>7.3f}")
    print("on TPU: not measured (no TPU on this project's machines)")


def worker(mesh_text: str, steps: int, rounds: int) -> int:
    import jax
    import numpy as np

    from trainers.config import ModelConfig
    from trainers.corpus import global_batch, load_corpus
    from trainers.jax.config import mesh_shape, preset, validate
    from trainers.jax.mesh import build_mesh, parse_mesh
    from trainers.jax.program import build_program, compute_dtype, device_batch
    from trainers.job.preemption import StopRequest
    from trainers.loop import lr_at

    data, fsdp, tensor = parse_mesh(mesh_text)
    total = WARMUP + steps
    config = replace(
        preset("tiny"), model=ModelConfig(**MODEL), batch_size=BATCH, steps=total,
        mesh_data=data, mesh_fsdp=fsdp, mesh_tensor=tensor, precision="fp32",
        eval_every=0, checkpoint_every=0, checkpoint_dir=None, model_dir=None,
    )
    validate(config, jax.device_count())
    program = build_program(config, build_mesh(mesh_shape(config, jax.device_count())),
                            compute_dtype(config.precision, jax.default_backend()))
    text = load_corpus(None, config.corpus_max_bytes, config.model.block_size)
    batches = []
    for step in range(1, total + 1):
        x, y = global_batch(text.train, config.seed, step, BATCH, config.model.block_size)
        batches.append((device_batch(program.batch, x), device_batch(program.batch, y),
                        np.float32(lr_at(step, config))))

    def bare() -> tuple[float, float]:
        state = program.init(jax.random.key(config.seed))
        for x, y, lr in batches[:WARMUP]:
            state, loss = program.train_step(state, x, y, lr)
        loss.block_until_ready()
        wall, cpu = time.perf_counter(), time.process_time()
        for x, y, lr in batches[WARMUP:]:
            state, loss = program.train_step(state, x, y, lr)
        loss.block_until_ready()
        return (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps

    def trainer() -> tuple[float, float]:
        from trainers.jax.trainer import JaxTrainer

        out = _StampedLines()
        stdout, sys.stdout = sys.stdout, out
        try:
            JaxTrainer(config, StopRequest()).run()
        finally:
            sys.stdout = stdout
        stamps = [(wall, cpu) for wall, cpu, line in out.lines
                  if json.loads(line).get("event") == "step"]
        (wall0, cpu0), (wall1, cpu1) = stamps[WARMUP - 1], stamps[-1]
        return (wall1 - wall0) / steps, (cpu1 - cpu0) / steps

    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "trainer": []}
    runs = {"bare": bare, "trainer": trainer}
    for round_ in range(rounds):
        # Alternate which goes first, so neither always gets the warmer caches.
        for kind in (("bare", "trainer") if round_ % 2 == 0 else ("trainer", "bare")):
            samples[kind].append(runs[kind]())
    rates = {
        clock: {kind: 1.0 / statistics.median(s[i] for s in values)
                for kind, values in samples.items()}
        for i, clock in enumerate(("wall", "cpu"))
    }
    print(json.dumps(rates), flush=True)
    return 0


class _StampedLines(io.TextIOBase):
    """stdout that records when each line arrived (wall and CPU clocks)."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, float, str]] = []
        self._partial = ""

    def write(self, text: str) -> int:
        wall, cpu = time.perf_counter(), time.process_time()
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        self.lines += [(wall, cpu, line) for line in complete if line]
        return len(text)


if __name__ == "__main__":
    sys.exit(main())
