"""A rank's measured peak memory beside the memory plan's figure for it, per layout.

    python -m bench.memory_fit [--steps 3]

A Llama-shaped model (Llama-3-8B's ratios: grouped-query attention 2:1 here, a gated MLP 2.75x
the width; 4 layers of width 256, a 384-token vocabulary, 3.1M parameters, fp32, Adam) trains
with the product's trainer on four CPU processes in each layout. Every rank measures its own
peak tensor memory (trainers/torch/memory_meter.py: the bytes of live tensors op by op, the
CPU's counterpart of torch.cuda.max_memory_allocated) and the plan is vertexplan.memory's for
the same shape and layout, the one the compose page shows. Each row prints the largest rank's
peak, the plan and their ratio (the goal: within 15%), and what one process would need to
train the model alone (the plan at world size 1) against the limit each rank ran under:
`--set memory_limit_mib`, past which a rank's run fails as a GPU out of memory does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MIB = 2**20
SEQ = 32
BATCH = 4  # global
LIMIT_MIB = 32  # each rank's memory: below what one process needs to train the model (~52)
CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 384,
    "hidden_size": 256, "intermediate_size": 704, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 4, "max_position_embeddings": SEQ,
    "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "float32",
    "bos_token_id": 0, "eos_token_id": 0,
}
# name: (the trainer's flags, the plan's layout keywords, micro-batch per rank)
LAYOUTS = {
    "fsdp4 full_shard": (["--strategy", "fsdp", "--fsdp-mode", "full_shard"],
                         {"strategy": "fsdp"}, 1),
    "tp2 x pp2": (["--strategy", "ddp", "--set", "tp=2", "--set", "pp=2"],
                  {"strategy": "ddp", "tensor_parallel": 2, "pipeline_parallel": 2}, 2),
}
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


def parameters(config: dict) -> int:
    """The Llama's parameter count: embeddings and an untied head, the final norm, and per
    layer attention (Q, K, V, O), the gated MLP and two norms."""
    h, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = h * config["num_key_value_heads"] // config["num_attention_heads"]
    layer = 2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h
    return 2 * vocab * h + h + config["num_hidden_layers"] * layer


def planned_bytes(config: dict, layout: dict, world_size: int, micro_batch: int) -> float:
    """The memory plan's total for one rank of this layout, in bytes."""
    from vertexplan import memory

    shape = memory.ModelShape(
        parameters=parameters(config), dtype="fp32", hidden_size=config["hidden_size"],
        layers=config["num_hidden_layers"], sequence_length=SEQ,
        attention_heads=config["num_attention_heads"], vocab_size=config["vocab_size"],
        intermediate_size=config["intermediate_size"], kv_heads=config["num_key_value_heads"],
        micro_batch_size=micro_batch)
    plan = memory.plan(shape, memory.Layout(devices_per_node=world_size, nodes=1, **layout),
                       gpu=False)
    return plan.total_gib * memory.GIB


def measured_peaks(config_path: Path, flags: list[str], steps: int) -> list[int]:
    """Every rank's peak tensor bytes in a run of the trainer's CLI on four processes."""
    args = [sys.executable, "-m", "trainers.train", "--model-config", str(config_path),
            *flags, "--nproc-per-node", "4", "--steps", str(steps), "--batch-size", str(BATCH),
            "--set", f"model.block_size={SEQ}", "--eval-every", "0", "--seed", "1",
            "--set", "corpus_max_bytes=64000", "--set", "precision=fp32",
            "--set", "measure_memory=true", "--set", f"memory_limit_mib={LIMIT_MIB}"]
    done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the trainer exited {done.returncode}: {done.stderr[-2000:]}")
    for line in done.stdout.splitlines():
        if '"run_finished"' in line:
            return json.loads(line)["peak_tensor_bytes"]
    raise RuntimeError("the trainer printed no run_finished")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args(argv)
    alone = planned_bytes(CONFIG, {"strategy": "ddp"}, 1, BATCH)
    print(f"model: {parameters(CONFIG):,} parameters; one process alone would need "
          f"{alone / MIB:.1f} MiB (plan), each rank's limit {LIMIT_MIB} MiB "
          f"(ratio {alone / MIB / LIMIT_MIB:.2f})")
    print(f"{'layout':<18}{'measured MiB':>14}{'plan MiB':>10}{'measured/plan':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "config.json"
        config_path.write_text(json.dumps(CONFIG))
        for name, (flags, layout, micro) in LAYOUTS.items():
            peak = max(measured_peaks(config_path, flags, args.steps))
            planned = planned_bytes(CONFIG, layout, 4, micro)
            print(f"{name:<18}{peak / MIB:>14.2f}{planned / MIB:>10.2f}{peak / planned:>15.3f}"
                  "   (goal: 0.85 to 1.15)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
