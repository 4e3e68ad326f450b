"""Train a byte-level GPT with DDP, FSDP, DeepSpeed ZeRO or tensor x pipeline x data parallelism.

One process (world size 1, CPU or one GPU):

    python -m trainers.train --preset tiny --steps 300 --checkpoint-dir /tmp/ckpt

Several processes on one machine (torchrun sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT):

    torchrun --nproc-per-node=2 -m trainers.train --preset tiny --strategy ddp
    python -m trainers.train --preset tiny --nproc-per-node 2      # starts torchrun itself

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

On Vertex AI (a CustomJob; every replica runs the same command):

    python -m trainers.train --preset small --strategy ddp

  Each replica reads CLUSTER_SPEC: ranks are the replicas of workerpool0 then workerpool1, the
  master is workerpool0[0]; workerpool2/3 replicas (Reduction Server, evaluators) exit 0. With
  several GPUs per replica, `--nproc-per-node auto` (the default) starts one process per GPU
  through torchrun. Checkpoints go to AIP_CHECKPOINT_DIR and the final model to AIP_MODEL_DIR
  unless --checkpoint-dir / --model-dir say otherwise. A run resumes from the newest complete
  checkpoint there; while there is none, from the one CP_RESUME_FROM (--resume-from) names,
  which must be complete (a resubmission of an earlier job from a chosen step).

The local Vertex emulator sets RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT as well; those win.

Events: one JSON object per line on stdout (see trainers/events.py).
Exit codes: 0 finished (or a replica that runs no trainer); 1 error; 2 bad configuration;
128+N stopped by signal N after an emergency checkpoint (143 for SIGTERM, 130 for SIGINT).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import typing
from collections.abc import Mapping, Sequence
from dataclasses import replace

import torch

from trainers import cluster, deepspeed_config, events, strategies
from trainers.config import (
    FSDP_MODES,
    PRESETS,
    TrainConfig,
    apply_overrides,
    fsdp_from_json,
    parallel_from_json,
    parse_json_object,
    preset,
    read_json_object,
    validate,
)
from trainers.preemption import StopRequest
from trainers.trainer import Trainer

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
# The control plane passes the generated configuration in the CustomJob's environment (it shares
# no file system with the container); a path flag wins over these.
DEEPSPEED_ENV = "CP_DEEPSPEED_CONFIG_JSON"
FSDP_ENV = "CP_FSDP_CONFIG_JSON"
PARALLELISM_ENV = "CP_PARALLELISM_JSON"
# A checkpoint of an earlier job to start from (a resubmission); the run's own checkpoints win.
RESUME_ENV = "CP_RESUME_FROM"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        # Also as a JSON event: on Vertex stderr text reaches the control plane unclassified.
        events.emit("error", message, severity="ERROR", rank=None, error_type="UsageError")
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m trainers.train",
        description="Train a byte-level GPT (DDP, FSDP, ZeRO); preset values apply where a flag "
        "is omitted.",
    )
    _add_strategy_arguments(parser)
    _add_schedule_arguments(parser)
    _add_storage_arguments(parser)
    parser.add_argument(
        "--nproc-per-node",
        default="auto",
        help="processes per machine: 'auto' = one per GPU (1 on CPU), or a "
        "number; above 1 the trainer starts itself under torchrun",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other TrainConfig field, e.g. --set warmup_steps=50 "
        "--set model.n_layer=4 --set micro_batch_size=4",
    )
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


def _add_schedule_arguments(parser: argparse.ArgumentParser) -> None:
    """The preset, and the flags that override its model and schedule values."""
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="tiny",
        help="model and schedule preset (default: tiny)",
    )
    parser.add_argument("--steps", type=int, help="optimizer steps (tiny: 300, small: 5000)")
    parser.add_argument("--seed", type=int, help="seed for weights and data (default: 1337)")
    # Each tunable value also answers to the spellings a tuning job's parameter ids take:
    # Vertex passes a trial's parameters as --<parameter_id>=<value> (VERTEX_FACTS.md A1).
    parser.add_argument(
        "--batch-size",
        "--batch_size",
        dest="batch_size",
        type=int,
        help="GLOBAL batch in sequences, over all ranks (tiny: 16, small: 64)",
    )
    parser.add_argument("--lr", "--learning-rate", "--learning_rate", dest="lr", type=float,
                        help="peak learning rate (tiny: 3e-3, small: 1e-3)")
    parser.add_argument("--warmup-steps", "--warmup_steps", dest="warmup_steps", type=int,
                        help="linear warm-up steps before the cosine decay (tiny: 20)")
    parser.add_argument("--weight-decay", "--weight_decay", dest="weight_decay", type=float,
                        help="AdamW weight decay (default: 0.1)")


def _add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    """Checkpoints, the exported model, the training data and evaluation."""
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        help="checkpoint every N steps; 0 = only final/emergency (tiny: 100)",
    )
    parser.add_argument("--keep", type=int, help="complete checkpoints kept; 0 = all (default: 3)")
    parser.add_argument(
        "--checkpoint-dir", help="default: $AIP_CHECKPOINT_DIR; neither = no checkpoints"
    )
    parser.add_argument(
        "--resume-from",
        help="a complete checkpoint (step folder) to start from when the checkpoint directory "
        "holds none; default: $CP_RESUME_FROM",
    )
    parser.add_argument(
        "--model-dir", help="final model export; default: $AIP_MODEL_DIR; neither = no export"
    )
    parser.add_argument(
        "--data", help="a text file to train on (default: the Python standard library)"
    )
    parser.add_argument(
        "--eval-every", type=int, help="evaluate every N steps; 0 = never (tiny: 100, small: 500)"
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
    flags = {
        "strategy": args.strategy,
        "steps": args.steps,
        "seed": args.seed,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "warmup_steps": args.warmup_steps,
        "weight_decay": args.weight_decay,
        "checkpoint_every": args.checkpoint_every,
        "keep": args.keep,
        "checkpoint_dir": args.checkpoint_dir or env.get("AIP_CHECKPOINT_DIR") or None,
        "resume_from": args.resume_from or env.get(RESUME_ENV) or None,
        "model_dir": args.model_dir or env.get("AIP_MODEL_DIR") or None,
        "data": args.data,
        "eval_every": args.eval_every,
    }
    config = replace(config, **{k: v for k, v in flags.items() if v is not None})
    return apply_overrides(config, args.overrides)


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

    # Configuration: anything wrong here is the caller's to fix (exit 2), before any work.
    try:
        config = config_from_args(args, env)
        process = cluster.process_from_env(env)
    except cluster.NotATrainer as exc:
        events.emit(
            "not_a_trainer",
            f"{exc.reason}: no trainer runs here, exiting 0",
            task_type=exc.task_type,
        )
        return EXIT_OK
    except ValueError as exc:
        events.error(None, exc)
        return EXIT_CONFIG

    try:
        nproc = cluster.resolve_nproc_per_node(
            args.nproc_per_node, torch.cuda.device_count() if config.device != "cpu" else 0
        )
    except ValueError as exc:
        events.error(process.rank, exc)
        return EXIT_CONFIG
    if nproc > 1 and not cluster.under_launcher(env):
        # Replace this process by torchrun (same PID: SIGTERM still reaches the launcher,
        # which forwards it to every trainer process).
        command = cluster.launcher_argv(cluster.node_from_env(env), nproc, argv)
        events.emit(
            "launching",
            f"starting {nproc} processes on this node: {' '.join(command)}",
            nproc_per_node=nproc,
        )
        os.execv(command[0], command)

    return run(config, process)


def run(config: TrainConfig, process: cluster.Process) -> int:
    # Installed first: a notice that arrives during start-up still stops after the first step.
    stop = StopRequest()
    stop.install()
    try:
        validate(config, process.world_size)
        strategies.check_config(config, process)
    except ValueError as exc:
        events.error(process.rank, exc)
        return EXIT_CONFIG
    code = EXIT_ERROR
    try:
        _, device = cluster.init_process_group(process, config.collective_timeout_s, config.device)
        if device == "cpu":
            torch.set_num_threads(config.cpu_threads)  # replicas often share a few cores
        code = Trainer(config, process, device, stop).run()
        return code
    except Exception as exc:
        events.error(process.rank, exc)
        traceback.print_exc(file=sys.stderr)
        return EXIT_ERROR
    finally:
        # Finished or stopped by an agreed signal, every rank ends at the same step.
        cluster.destroy_process_group(together=code != EXIT_ERROR)


def exit_now(code: int) -> typing.NoReturn:
    """Leave without the interpreter's and the C++ runtime's teardown. Everything that matters
    is already out: events are flushed line by line, checkpoints committed and fsync'd, the
    process group left. What remains is static destruction of torch.distributed's objects,
    where a gloo or store thread torn down out of order can still abort the process
    (`terminate called without an active exception`, exit -6) after a clean run, and a
    replica's exit code is what Vertex judges the job by."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
