"""Train the byte-level GPT, a Hugging Face causal LM or a VLM (below) with DDP, FSDP, DeepSpeed
ZeRO or tensor x pipeline x data parallelism.

One process (world size 1, CPU or one GPU):

    python -m trainers.train --preset tiny --steps 300 --checkpoint-dir /tmp/ckpt

Several processes on one machine (torchrun sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT):

    torchrun --nproc-per-node=2 -m trainers.train --preset tiny --strategy ddp
    python -m trainers.train --preset tiny --nproc-per-node 2      # launches the 2 itself

Strategies (all train on CPU with gloo as well as on GPUs with NCCL):

    --strategy ddp | single                       replicated model, all-reduced gradients
    --strategy fsdp --fsdp-mode full_shard        FSDP2 (fully_shard); also shard_grad_op,
                                                  hybrid_shard (--set fsdp.shard_size=N)
    --strategy zero1 | zero2 | zero3              DeepSpeed ZeRO; --deepspeed-config ds.json,
                                                  --set offload_optimizer=true / offload_params=true

    python -m trainers.train --strategy zero3 --deepspeed-config gs://bucket/job/ds.json \
        --nproc-per-node auto --checkpoint-dir gs://bucket/job/checkpoints

  Parallel degrees: --set dp=N --set tp=N --set pp=N; dp x tp x pp must equal WORLD_SIZE
  (dp=0, the default, takes what is left). With tp or pp above 1, ddp and fsdp run over the dp
  dimension of a (pp, dp, tp) device mesh (strategies tp_pp / tp_pp_fsdp, which also run at
  tp = pp = 1): tensor parallelism splits every layer by heads (--set sequence_parallel=true
  splits norms and dropout by sequence too), pipeline parallelism cuts the layers into stages
  (--set pp_schedule=gpipe|1f1b|interleaved_1f1b, --set pp_virtual_stages=2 for interleaving,
  micro-batches of --set micro_batch_size=N sequences):

    torchrun --nproc-per-node=4 -m trainers.train --strategy fsdp --set tp=2 --set pp=2

  From the control plane, the same settings arrive as JSON in the environment:
  CP_DEEPSPEED_CONFIG_JSON (as --deepspeed-config), CP_FSDP_CONFIG_JSON (as --fsdp-config),
  CP_PARALLELISM_JSON ({"dp": D, "tp": T, "pp": P}); flags and --set still win.
  Background checkpoint writes (ddp, fsdp): --set async_checkpoint=true.
  Activation checkpointing of every block, in every strategy: --activation-checkpointing
  selective|full (or --set activation_checkpointing=...); --compile-blocks compiles each block.

Streamed data instead of the corpus (trainers/stream/): every data-parallel rank reads its share
of sharded JSONL, Parquet or token files (local or gs://), tokenized as read; the position is
saved in every checkpoint, so a resumed run continues with the batches it would have seen:

    python -m trainers.train --data-files 'gs://bucket/data/train-*.parquet' \
        --eval-data-files gs://bucket/data/val.parquet --tokenizer tokenizer.json

On Vertex AI (a CustomJob; every replica runs the same command):

    python -m trainers.train --preset small --strategy ddp

  Each replica reads CLUSTER_SPEC: ranks are the replicas of workerpool0 then workerpool1, the
  master is workerpool0[0]; workerpool2/3 replicas (Reduction Server, evaluators) exit 0. With
  several GPUs per replica, `--nproc-per-node auto` (the default) starts one process per GPU
  under torchrun's elastic agent (forked from a warm interpreter: trainers/torch/distributed.py).
  Checkpoints go to AIP_CHECKPOINT_DIR and the final model to AIP_MODEL_DIR unless
  --checkpoint-dir / --model-dir say otherwise. A run resumes from the newest complete
  checkpoint there; while there is none, from the one CP_RESUME_FROM (--resume-from) names,
  which must be complete (a resubmission of an earlier job from a chosen step).

The local Vertex emulator sets RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT as well; those win.

A Hugging Face causal LM instead of the GPT (Llama, Mistral, Qwen2, Qwen3, Gemma), with every
strategy above; the sequence length is --set model.block_size=N:

    python -m trainers.train --model-config llama/config.json --tokenizer llama/tokenizer.json
    python -m trainers.train --model-config llama-3-8b --strategy fsdp --set tp=2  # a shape
    python -m trainers.train --init-from /gcs/bucket/qwen3 --strategy fsdp \
        --tokenizer /gcs/bucket/qwen3/tokenizer.json --export-hf gs://bucket/job/hf

A vision-language model (Qwen2-VL) fine-tuned on image + text pairs (single, ddp, fsdp, zeroN):

    python -m trainers.train --model-config qwen2-vl-2b --tokenizer qwen2-vl/tokenizer.json \
        --vlm-data /gcs/bucket/pairs/train.jsonl --strategy zero2 --set model.block_size=1024

Events: one JSON object per line on stdout (see trainers/events.py). Exit codes: trainers/cli.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace

import torch

from contract import events as contract_events
from trainers import cli, events
from trainers.config import parse_json_object, read_json_object
from trainers.job import cluster
from trainers.job.preemption import StopRequest
from trainers.torch import activation_checkpointing, distributed, strategies, vlm_data
from trainers.torch.config import (
    FSDP_MODES,
    TrainConfig,
    fsdp_from_json,
    parallel_from_json,
    preset,
)
from trainers.torch.strategies import deepspeed_config
from trainers.torch.trainer import Trainer
from trainers.torch.validation import validate

# The control plane passes the generated configuration in the CustomJob's environment (it shares
# no file system with the container); a path flag wins over these.
DEEPSPEED_ENV = "CP_DEEPSPEED_CONFIG_JSON"
FSDP_ENV = "CP_FSDP_CONFIG_JSON"
PARALLELISM_ENV = "CP_PARALLELISM_JSON"


def build_parser() -> argparse.ArgumentParser:
    parser = cli.Parser(
        prog="python -m trainers.train",
        description="Train a byte-level GPT (DDP, FSDP, ZeRO); preset values apply where a flag "
        "is omitted.",
    )
    _add_strategy_arguments(parser)
    _add_model_arguments(parser)
    parser.add_argument(
        "--activation-checkpointing",
        choices=activation_checkpointing.MODES,
        help="recompute activations in backward: selective (attention and elementwise ops), "
        "full (each block); default: none",
    )
    parser.add_argument(
        "--compile-blocks",
        action="store_true",
        default=None,
        help="torch.compile each transformer block's forward (default: off)",
    )
    cli.add_schedule_arguments(parser)
    cli.add_storage_arguments(parser)
    _add_stream_arguments(parser)
    parser.add_argument(
        "--nproc-per-node",
        default="auto",
        help="processes per machine: 'auto' = one per GPU (1 on CPU), or a "
        "number; above 1 the trainer starts them itself under torchrun's elastic agent",
    )
    _add_debug_arguments(parser)
    cli.add_overrides_argument(
        parser, "--set warmup_steps=50 --set model.n_layer=4 --set micro_batch_size=4")
    return parser


def _strategy_name(value: str) -> str:
    try:
        return strategies.check_name(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_strategy_arguments(parser: argparse.ArgumentParser) -> None:
    """--strategy and the FSDP and DeepSpeed settings."""
    parser.add_argument(
        "--strategy",
        type=_strategy_name,
        default="ddp",
        help=f"parallelism strategy: {', '.join(strategies.SUPPORTED)} "
        "(default: ddp; single = one process)",
    )
    parser.add_argument(
        "--fsdp-mode",
        choices=FSDP_MODES,
        help="with --strategy fsdp (default: full_shard, or the --fsdp-config file's mode)",
    )
    parser.add_argument(
        "--fsdp-config",
        metavar="PATH",
        help='FSDP settings as JSON, e.g. {"mode": "hybrid_shard", "shard_size": 8} '
        "(local path or gs://; default: $CP_FSDP_CONFIG_JSON, the JSON itself)",
    )
    parser.add_argument(
        "--deepspeed-config",
        metavar="PATH",
        help="DeepSpeed JSON for zero1/2/3 (local path or gs://; default: "
        "$CP_DEEPSPEED_CONFIG_JSON, the JSON itself); its batch, clipping, bf16 and "
        "offload settings become defaults under the other flags, and must agree with them",
    )


def _add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    """Streamed files instead of the corpus (trainers/stream/); more with --set stream.X=Y."""
    parser.add_argument(
        "--data-files", metavar="PATTERN",
        help="train on these files, streamed per rank: a glob, folder or file, local or gs:// "
        "(.jsonl, .parquet text; .npy, .bin tokens); without --eval-data-files, no evaluation",
    )
    parser.add_argument("--eval-data-files", metavar="PATTERN",
                        help="held-out files for evaluation with --data-files")
    parser.add_argument("--text-field",
                        help="the JSONL field / Parquet column of the text (default: text)")
    parser.add_argument("--vlm-data", metavar="MANIFEST",
                        help="a VLM's image + text pairs: a JSONL manifest of "
                        '{"image": PATH, "prompt": ..., "text": ...} lines (trainers/torch/'
                        "vlm_data.py), or vlm-demo (a few shipped pairs and their tokenizer); with "
                        "a Qwen2-VL --model-config and --tokenizer")
    parser.add_argument("--eos-id", type=int, help="the token between documents (default: the "
                        "tokenizer's end-of-text token; 0 for bytes)")


def _add_debug_arguments(parser: argparse.ArgumentParser) -> None:
    """Faults for testing hang and straggler detection (never in a real job)."""
    parser.add_argument("--debug-hang-at-step", type=int, metavar="N",
                        help="test fault: the last rank blocks at step N of a first run, "
                        "printing nothing, like a collective whose peer died")
    parser.add_argument("--debug-slow-rank", type=int, metavar="R",
                        help="test fault: rank R sleeps --debug-slow-seconds in every step")
    parser.add_argument("--debug-slow-seconds", type=float, metavar="S",
                        help="how long --debug-slow-rank sleeps per step")


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """A Hugging Face causal LM instead of the preset's GPT, its weights and tokenizer."""
    parser.add_argument(
        "--model-config",
        metavar="PATH|SHAPE",
        help="a Hugging Face config.json (local or gs://) of a supported causal LM (Llama, "
        "Mistral, Qwen2, Qwen3, Gemma), or a shipped shape's name (llama-3-8b, llama-3-70b, "
        "qwen3-8b, gemma-2b): trains a fresh model of it, initialised from --seed",
    )
    parser.add_argument(
        "--init-from",
        metavar="DIR",
        help="a folder of Hugging Face safetensors weights (model.safetensors, or shards with "
        "model.safetensors.index.json) to start from; its config.json unless --model-config",
    )
    parser.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="a tokenizer.json (Hugging Face tokenizers) the training text is tokenized with "
        "(default: bytes)",
    )
    parser.add_argument(
        "--export-hf",
        metavar="DIR",
        help="write the final model as Hugging Face safetensors + config.json there "
        "(default: --model-dir for a Hugging Face model)",
    )


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> TrainConfig:
    """Preset, then the config files' values (a path flag, else the control plane's JSON in
    the environment), then the flags, then --set overrides."""
    config = preset(args.preset)
    if env.get(PARALLELISM_ENV):
        degrees = parse_json_object(env[PARALLELISM_ENV], PARALLELISM_ENV)
        config = replace(config, **parallel_from_json(degrees))
    fsdp = _config_object(args.fsdp_config, env, FSDP_ENV, "FSDP config")
    if fsdp is not None:
        config = replace(config, fsdp=fsdp_from_json(fsdp))
    ds = _config_object(args.deepspeed_config, env, DEEPSPEED_ENV, "DeepSpeed config")
    if ds is not None:
        config = replace(config, deepspeed=ds, **deepspeed_config.defaults_from(ds))
    if args.fsdp_mode:
        config = replace(config, fsdp=replace(config.fsdp, mode=args.fsdp_mode))
    stream = {"data_files": args.data_files, "eval_data_files": args.eval_data_files,
              "text_field": args.text_field, "eos_id": args.eos_id}
    config = replace(
        config, stream=replace(config.stream, **{k: v for k, v in stream.items() if v is not None}))
    flags = {
        "strategy": args.strategy,
        "activation_checkpointing": args.activation_checkpointing,
        "compile_blocks": args.compile_blocks,
        "hf_config": args.model_config,
        "init_from": args.init_from,
        "tokenizer": args.tokenizer or vlm_data.shipped_tokenizer(args.vlm_data),
        "export_hf": args.export_hf,
        "vlm_data": vlm_data.shipped_manifest(args.vlm_data),
        "debug_hang_at_step": args.debug_hang_at_step,
        "debug_slow_rank": args.debug_slow_rank,
        "debug_slow_seconds": args.debug_slow_seconds,
        **cli.run_flags(args, env),
    }
    return cli.with_flags(config, flags, args.overrides)


def _config_object(
    path: str | None, env: Mapping[str, str], variable: str, what: str
) -> dict | None:
    if path:
        return read_json_object(path, what)
    if env.get(variable):
        return parse_json_object(env[variable], f"{what} in ${variable}")
    return None


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if env is None else env
    args = build_parser().parse_args(argv)

    started = cli.configure(lambda: (config_from_args(args, env), cluster.process_from_env(env)))
    if isinstance(started, int):
        return started
    config, process = started

    try:
        nproc = distributed.resolve_nproc_per_node(
            args.nproc_per_node, torch.cuda.device_count() if config.device != "cpu" else 0
        )
    except ValueError as exc:
        events.error(process.rank, exc)
        return cli.EXIT_CONFIG
    if nproc > 1 and not distributed.under_launcher(env):
        node = cluster.node_from_env(env)
        command = distributed.launcher_argv(node, nproc, argv)
        events.emit(
            contract_events.LAUNCHING,
            f"starting {nproc} processes on this node, as {' '.join(command)} would",
            nproc_per_node=nproc,
        )
        # This process stays the launcher (same PID: SIGTERM still reaches the agent, which
        # forwards it to every trainer process).
        return distributed.launch_workers(node, nproc, argv, run_worker)

    return run(config, process)


def run_worker(argv: list[str]) -> None:
    """One process of a node's workers (distributed.launch_workers forks it): the trainer with
    the environment the agent set. A failure's exit status is the process's, as it would be
    for a worker torchrun started as a program."""
    code = main(argv)
    if code != 0:
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(code)


def run(config: TrainConfig, process: cluster.Process) -> int:
    # Installed first: a notice that arrives during start-up still stops after the first step.
    stop = StopRequest()
    stop.install()
    refused = cli.checked(process.rank, lambda: (validate(config, process.world_size),
                                                 strategies.check_config(config, process)))
    if refused is not None:
        return refused
    code = cli.EXIT_ERROR

    def train() -> int:
        _, device = distributed.init_process_group(
            process, config.collective_timeout_s, config.device)
        if device == "cpu":
            torch.set_num_threads(config.cpu_threads)  # replicas often share a few cores
        return Trainer(config, process, device, stop).run()

    try:
        code = cli.train(process.rank, train)
        return code
    finally:
        # Finished or stopped by an agreed signal, every rank ends at the same step.
        distributed.destroy_process_group(together=code != cli.EXIT_ERROR)
