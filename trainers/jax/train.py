"""Train the byte-level GPT with JAX over a (data, fsdp, tensor) device mesh.

One host (CPU, one GPU, or a single-VM TPU slice such as v5e 2x2):

    python -m trainers.jax --preset tiny --steps 300 --checkpoint-dir /tmp/ckpt
    python -m trainers.jax --mesh 2,2,2          # data 2 x fsdp 2 x tensor 2 = 8 devices

On CPU, XLA_FLAGS=--xla_force_host_platform_device_count=8 gives one process 8 devices, which
is how the tests run every mesh. The default mesh is all data-parallel (`--mesh 0,1,1`: data
takes whatever fsdp and tensor leave). Arithmetic is bf16 where the device has it (TPU, GPU)
and fp32 on CPU (`--precision fp32|bf16` says otherwise); parameters stay fp32.

Several hosts (a multi-VM TPU slice on Vertex; every host runs the same command): the hosts
are read from JAX_COORDINATOR_ADDRESS/JAX_NUM_PROCESSES/JAX_PROCESS_ID, TPU_WORKER_HOSTNAMES/
TPU_WORKER_ID, or CLUSTER_SPEC (trainers/jax/hosts.py), and `jax.distributed.initialize` joins
them before any device is touched; the mesh spans the devices of all hosts.

Checkpoints, data and events follow the PyTorch trainer (python -m trainers.train): checkpoints
go to AIP_CHECKPOINT_DIR and the final parameters to AIP_MODEL_DIR unless --checkpoint-dir /
--model-dir say otherwise; a run resumes from the newest complete checkpoint there, else from
the one CP_RESUME_FROM (--resume-from) names; any mesh resumes a checkpoint of any other.
SIGTERM (a spot notice) stops after the current step with a checkpoint and a `preempted` event.

As a tuning trial (Vertex passes the trial's parameters as `--learning_rate=0.001` and the like):
every evaluation's val_loss and val_perplexity are reported in cloudml-hypertune's file
(trainers/hypertune.py). With WANDB_PROJECT set, host 0 logs its steps, evaluations and config
to W&B and prints a `tracking` event with the run's URL (trainers/tracking.py).

Exit codes: 0 finished (or a replica that runs no trainer); 1 error; 2 bad configuration;
128+N stopped by signal N after an emergency checkpoint (143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import typing
from collections.abc import Mapping, Sequence
from dataclasses import replace

import jax

from trainers import events
from trainers.cluster import NotATrainer
from trainers.config import PRESETS, apply_overrides
from trainers.jax.config import PRECISIONS, JaxTrainConfig, preset, validate
from trainers.jax.hosts import HostPlan, host_plan
from trainers.jax.mesh import parse_mesh
from trainers.jax.trainer import JaxTrainer
from trainers.preemption import StopRequest

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
RESUME_ENV = "CP_RESUME_FROM"  # as for the PyTorch trainer: an earlier job's checkpoint


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        # Also as a JSON event: on Vertex stderr text reaches the control plane unclassified.
        events.emit("error", message, severity="ERROR", rank=None, error_type="UsageError")
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m trainers.jax",
        description="Train a byte-level GPT with JAX over a device mesh; preset values apply "
        "where a flag is omitted.",
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tiny",
                        help="model and schedule preset (default: tiny)")
    parser.add_argument("--mesh", metavar="DATA,FSDP,TENSOR",
                        help="mesh degrees, multiplying to the device count of all hosts; "
                        "data 0 = the devices left (default: 0,1,1, all data-parallel)")
    parser.add_argument("--precision", choices=PRECISIONS,
                        help="arithmetic: auto = bf16 on TPU/GPU, fp32 on CPU (default: auto)")
    parser.add_argument("--steps", type=int, help="optimizer steps (tiny: 300, small: 5000)")
    parser.add_argument("--seed", type=int, help="seed for weights and data (default: 1337)")
    # Each tunable value also answers to the spellings a tuning job's parameter ids take, as
    # the PyTorch trainer's do: Vertex passes a trial's parameters as --<parameter_id>=<value>
    # (VERTEX_FACTS.md A1); argparse reads `--name=value` and `--name value` alike.
    parser.add_argument("--batch-size", "--batch_size", dest="batch_size", type=int,
                        help="GLOBAL batch in sequences, over all devices (tiny: 16, small: 64)")
    parser.add_argument("--lr", "--learning-rate", "--learning_rate", dest="lr", type=float,
                        help="peak learning rate (tiny: 3e-3, small: 1e-3)")
    parser.add_argument("--warmup-steps", "--warmup_steps", dest="warmup_steps", type=int,
                        help="linear warm-up steps before the cosine decay (tiny: 20)")
    parser.add_argument("--weight-decay", "--weight_decay", dest="weight_decay", type=float,
                        help="AdamW weight decay (default: 0.1)")
    parser.add_argument("--checkpoint-every", type=int,
                        help="checkpoint every N steps; 0 = only final/emergency (tiny: 100)")
    parser.add_argument("--keep", type=int, help="complete checkpoints kept; 0 = all (default: 3)")
    parser.add_argument("--checkpoint-dir",
                        help="default: $AIP_CHECKPOINT_DIR; neither = no checkpoints")
    parser.add_argument("--resume-from",
                        help="a complete checkpoint (step folder) to start from when the "
                        "checkpoint directory holds none; default: $CP_RESUME_FROM")
    parser.add_argument("--model-dir",
                        help="final parameters; default: $AIP_MODEL_DIR; neither = no export")
    parser.add_argument("--data", help="a text file to train on (default: the Python standard "
                        "library)")
    parser.add_argument("--eval-every", type=int,
                        help="evaluate every N steps; 0 = never (tiny: 100, small: 500)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="any other setting, e.g. --set warmup_steps=50 --set model.n_layer=4")
    return parser


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> JaxTrainConfig:
    """Preset, then the flags (and the Vertex variables they default to), then --set."""
    config = preset(args.preset)
    flags: dict[str, typing.Any] = {
        "precision": args.precision,
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
    if args.mesh:
        flags["mesh_data"], flags["mesh_fsdp"], flags["mesh_tensor"] = parse_mesh(args.mesh)
    config = replace(config, **{k: v for k, v in flags.items() if v is not None})
    return apply_overrides(config, args.overrides)


def start_hosts(plan: HostPlan) -> None:
    """Join the other hosts before anything touches a device; nothing to do on one host."""
    if plan.kind == "single":
        return
    events.emit("hosts", f"joining {plan.num_processes} hosts ({plan.source})",
                source=plan.source, coordinator=plan.coordinator,
                num_processes=plan.num_processes, process_id=plan.process_id)
    jax.distributed.initialize(**plan.initialize_kwargs())


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if env is None else env
    args = build_parser().parse_args(argv)
    # Installed first: a notice that arrives during start-up still stops after the first step.
    stop = StopRequest()
    stop.install()
    try:
        config = config_from_args(args, env)
        plan = host_plan(env)
    except NotATrainer as exc:
        events.emit("not_a_trainer", f"{exc.reason}: no trainer runs here, exiting 0",
                    task_type=exc.task_type)
        return EXIT_OK
    except ValueError as exc:
        events.error(None, exc)
        return EXIT_CONFIG

    try:
        start_hosts(plan)
    except Exception as exc:
        events.error(plan.process_id, RuntimeError(
            f"cannot join the other hosts ({plan.source}): {exc}"))
        traceback.print_exc(file=sys.stderr)
        return EXIT_ERROR
    # Again: jax.distributed's preemption notifier takes SIGTERM for itself when it starts, and
    # the trainer's own handling (stop together after a step, checkpoint, `preempted`) is the
    # contract. A notice received meanwhile is kept.
    stop.install()

    rank = jax.process_index()
    try:
        validate(config, jax.device_count())
    except ValueError as exc:
        events.error(rank, exc)
        return EXIT_CONFIG
    try:
        return JaxTrainer(config, stop).run()
    except Exception as exc:
        events.error(rank, exc)
        traceback.print_exc(file=sys.stderr)
        return EXIT_ERROR
