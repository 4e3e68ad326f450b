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
(trainers/job/hypertune.py). With WANDB_PROJECT set, host 0 logs its steps, evaluations and config
to W&B and prints a `tracking` event with the run's URL (trainers/job/tracking.py).

The flags, the events and the exit codes are every trainer's (trainers/cli.py, trainers/loop.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import typing
from collections.abc import Mapping, Sequence

import jax

from contract import events as contract_events
from trainers import cli, events
from trainers.config import CHECKPOINTING_MODES
from trainers.jax.config import PRECISIONS, JaxTrainConfig, preset, validate
from trainers.jax.hosts import HostPlan, host_plan
from trainers.jax.mesh import parse_mesh
from trainers.jax.trainer import JaxTrainer
from trainers.job.preemption import StopRequest


def build_parser() -> argparse.ArgumentParser:
    parser = cli.Parser(
        prog="python -m trainers.jax",
        description="Train a byte-level GPT with JAX over a device mesh; preset values apply "
        "where a flag is omitted.",
    )
    parser.add_argument("--mesh", metavar="DATA,FSDP,TENSOR",
                        help="mesh degrees, multiplying to the device count of all hosts; "
                        "data 0 = the devices left (default: 0,1,1, all data-parallel)")
    parser.add_argument("--activation-checkpointing", choices=CHECKPOINTING_MODES,
                        help="rematerialise each block in backward: selective (attention and "
                        "elementwise ops), full (the whole block); default: none")
    parser.add_argument("--precision", choices=PRECISIONS,
                        help="arithmetic: auto = bf16 on TPU/GPU, fp32 on CPU (default: auto)")
    cli.add_schedule_arguments(parser, batch_over="devices")
    cli.add_storage_arguments(parser, exported="parameters")
    cli.add_overrides_argument(parser, "--set warmup_steps=50 --set model.n_layer=4")
    cli.add_slow_rank_arguments(parser, rank="host (process)")
    return parser


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> JaxTrainConfig:
    """Preset, then the flags (and the Vertex variables they default to), then --set."""
    flags: dict[str, typing.Any] = {"precision": args.precision,
                                    "activation_checkpointing": args.activation_checkpointing,
                                    "debug_slow_rank": args.debug_slow_rank,
                                    "debug_slow_seconds": args.debug_slow_seconds,
                                    **cli.run_flags(args, env)}
    if args.mesh:
        flags["mesh_data"], flags["mesh_fsdp"], flags["mesh_tensor"] = parse_mesh(args.mesh)
    return cli.with_flags(preset(args.preset), flags, args.overrides)


def start_hosts(plan: HostPlan) -> None:
    """Join the other hosts before anything touches a device; nothing to do on one host."""
    if plan.kind == "single":
        return
    events.emit(contract_events.HOSTS, f"joining {plan.num_processes} hosts ({plan.source})",
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
    started = cli.configure(lambda: (config_from_args(args, env), host_plan(env)))
    if isinstance(started, int):
        return started
    config, plan = started

    try:
        start_hosts(plan)
    except Exception as exc:
        events.error(plan.process_id, RuntimeError(
            f"cannot join the other hosts ({plan.source}): {exc}"))
        traceback.print_exc(file=sys.stderr)
        return cli.EXIT_ERROR
    # Again: jax.distributed's preemption notifier takes SIGTERM for itself when it starts, and
    # the trainer's own handling (stop together after a step, checkpoint, `preempted`) is the
    # contract. A notice received meanwhile is kept.
    stop.install()

    rank = jax.process_index()
    refused = cli.checked(rank, lambda: validate(config, jax.device_count()))
    if refused is not None:
        return refused
    return cli.train(rank, lambda: JaxTrainer(config, stop).run())
