"""Tokens/s per device and MFU of the trainer on Llama-shaped models, beside a bare loop.

    python -m bench.llama_throughput [--steps 6] [--rows llama-3-8b,llama-3-70b]

Each row is a shipped shape (trainers/torch/models/shapes/) with its architecture, head
dimension and ratios of query to key/value heads and of MLP to model width kept, scaled in
width, depth and vocabulary (8,192 tokens: the trainer's corpus is bytes) to ~30-45M
parameters, so a step of 2,048 tokens takes 4-6 s on one CPU core. The trainer runs as
the CLI runs it (`python -m trainers.train --model-config CONFIG`, checkpoints and evaluation
off, one torch thread per process) at world 1 and at FSDP2 full_shard over 2 processes (gloo);
its tokens/s is a step's global batch over the median interval between its step events after
the warmup, divided by the processes for the per-device figure.

Beside each: the reference, transformers' own model of the same config stepped by a bare loop
in one process (batches made up front, forward, cross-entropy, backward, AdamW), and the ratio
of the trainer's tokens/s per device to it. MFU is tokens/s per device x model FLOPs per token
(`vertexplan.perf.flops`: 6 x parameters + attention, less the input embedding, a lookup) over
a peak: the catalogue has none for a CPU (bench.mfu), so the bench measures the one it divides
by, the FLOP/s one core reaches on a 2048 x 2048 fp32 matrix product (best of 5). CPU only:
processes are started with CUDA hidden.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.machine import cpu_model

WARMUP = 3
SEQ = 256
BATCH = 8  # global: 2,048 tokens a step
# Each shape at a CPU size: (layers, width); heads, key/value heads and the MLP follow its ratios.
ROWS = {"llama-3-8b": (6, 512), "llama-3-70b": (2, 1024)}
VOCAB = 8192
WORLDS = ((1, ["--strategy", "single"]),
          (2, ["--strategy", "fsdp", "--fsdp-mode", "full_shard"]))
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


def scaled_config(shape: str, layers: int, width: int) -> dict:
    """The shape's config.json at `layers` x `width` and VOCAB tokens, its head dimension, head
    ratio and MLP ratio kept (heads = width / the shape's head dimension)."""
    from trainers.torch.models import hf_config

    values = dict(hf_config.read_spec(shape).values)
    head_dim = values["hidden_size"] // values["num_attention_heads"]
    heads = width // head_dim
    ratio = values["num_attention_heads"] // values["num_key_value_heads"]
    mlp = values["intermediate_size"] / values["hidden_size"]
    return {**values, "hidden_size": width, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": max(heads // ratio, 1),
            "intermediate_size": int(width * mlp) // 64 * 64, "max_position_embeddings": SEQ,
            "vocab_size": VOCAB, "bos_token_id": 0, "eos_token_id": 0,
            # The published configs name bfloat16, in which transformers would build the bare
            # loop's model; both sides of the ratio train in fp32.
            "torch_dtype": "float32"}


def trainer_step_s(config_path: Path, world: int, strategy: list[str], steps: int) -> float:
    """The median step time of the trainer's CLI run, from its step events."""
    args = [sys.executable, "-m", "trainers.train", "--model-config", str(config_path),
            *strategy, "--nproc-per-node", str(world), "--steps", str(WARMUP + steps),
            "--batch-size", str(BATCH), "--set", f"model.block_size={SEQ}",
            "--eval-every", "0", "--checkpoint-every", "0", "--seed", "1",
            "--set", "precision=fp32"]
    done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the trainer exited {done.returncode}: {done.stderr[-2000:]}")
    times = [event["step_time_s"] for event in map(_json, done.stdout.splitlines())
             if event.get("event") == "step" and event["step"] > WARMUP]
    return statistics.median(times)


def _json(line: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def bare_step_s(config: dict, steps: int) -> tuple[float, int]:
    """transformers' model of `config` in a bare loop on one thread: median step time, and its
    parameter count."""
    import torch
    from transformers import CONFIG_MAPPING, AutoModelForCausalLM

    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = AutoModelForCausalLM.from_config(
        CONFIG_MAPPING[config["model_type"]].from_dict(config), attn_implementation="sdpa",
        dtype=torch.float32)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = [torch.randint(0, config["vocab_size"], (BATCH, SEQ + 1))
               for _ in range(WARMUP + steps)]
    times = []
    for batch in batches:
        start = time.perf_counter()
        logits = model(batch[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times[WARMUP:]), sum(p.numel() for p in model.parameters())


def cpu_matmul_flops() -> float:
    """The FLOP/s one thread reaches on a 2048 x 2048 fp32 matrix product (best of 5)."""
    import torch

    torch.set_num_threads(1)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(5))
    return 2 * 2048**3 / best


def _timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def rows(names: list[str], steps: int) -> list[dict]:
    from vertexplan.perf.flops import ModelShape, flops_per_token

    peak = cpu_matmul_flops()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            config = scaled_config(name, *ROWS[name])
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(config))
            bare_s, params = bare_step_s(config, steps)
            # The input embedding is a lookup, not a product: its parameters cost no FLOPs.
            per_token = flops_per_token(ModelShape(
                params - VOCAB * config["hidden_size"], config["num_hidden_layers"],
                config["num_attention_heads"], config["hidden_size"], SEQ))
            bare = BATCH * SEQ / bare_s
            for world, strategy in WORLDS:
                per_device = BATCH * SEQ / trainer_step_s(path, world, strategy, steps) / world
                out.append({"shape": name, "params": params, "world": world,
                            "strategy": strategy[1], "tokens_per_s_per_device": per_device,
                            "bare_tokens_per_s": bare, "ratio": per_device / bare,
                            "mfu": per_device * per_token / peak, "peak_flops": peak})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="timed steps per run")
    parser.add_argument("--rows", default=",".join(ROWS), help="shapes: " + ", ".join(ROWS))
    args = parser.parse_args(argv)
    found = rows(args.rows.split(","), args.steps)
    print(f"{cpu_model()}; {BATCH} x {SEQ} tokens a step, fp32, one thread per process; "
          f"peak: measured matmul {found[0]['peak_flops'] / 1e9:.1f} GFLOP/s a core")
    print("| shape (scaled) | params | layout | tokens/s per device | bare loop | ratio | MFU |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for row in found:
        layout = "world 1" if row["world"] == 1 else f"fsdp{row['world']} full_shard"
        print(f"| {row['shape']} | {row['params'] / 1e6:.1f}M | {layout} | "
              f"{row['tokens_per_s_per_device']:,.0f} | {row['bare_tokens_per_s']:,.0f} | "
              f"{row['ratio']:.3f} | {row['mfu']:.1%} |")


if __name__ == "__main__":
    main()
