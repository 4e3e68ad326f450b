"""Train the byte-level GPT with PyTorch/XLA (PJRT) over an SPMD (data, fsdp) device mesh.

One host (a single-VM TPU slice such as v5e 2x2, or the CPU):

    PJRT_DEVICE=TPU python -m trainers.xla --preset tiny --steps 300 --checkpoint-dir /tmp/ckpt
    PJRT_DEVICE=CPU python -m trainers.xla --steps 20     # one CPU device: a single replica
    PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python -m trainers.xla --mesh 2,2

The mesh (`--mesh DATA,FSDP`, default 0,1: every device data-parallel) spans every device of
every host: the batch is split over data x fsdp, matrices over fsdp (trainers/xla/mesh.py).
torch_xla's SPMD mode runs one process per host and the compiler inserts the collectives, so a
multi-VM slice needs no launcher: every host runs the same command and PJRT finds the others
from the TPU VM's metadata. The hosts' Python meets in a gloo group (stop flags after every
step, checkpoints): trainers/xla/hosts.py; processes that PJRT does not join (the CPU device)
are hosts too when RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT or CLUSTER_SPEC say so.
`--activation-checkpointing full` recomputes each block in backward (torch_xla's checkpoint);
the PyTorch trainer's `selective` and `compile_blocks` are refused.

Everything else is the PyTorch trainer's (python -m trainers.train), which this is on an XLA
device (trainers/xla/trainer.py): the flags, presets and --set settings, the model, the
batches, the events, the checkpoints (AIP_CHECKPOINT_DIR, or --checkpoint-dir; resumed from the
newest complete one, else from CP_RESUME_FROM), the export (AIP_MODEL_DIR), SIGTERM ->
checkpoint -> `preempted` -> exit 143, and the exit codes (trainers/cli.py). It runs in its own
environment (requirements-tpu-xla.txt: torch_xla pins its torch), never in the project's.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from trainers import cli, events
from trainers.job import cluster
from trainers.job.preemption import StopRequest
from trainers.torch.config import TrainConfig
from trainers.torch.main import build_parser as torch_parser
from trainers.torch.main import config_from_args
from trainers.torch.validation import validate
from trainers.xla import hosts
from trainers.xla import mesh as meshes

DEFAULT_MESH = "0,1"


def build_parser() -> argparse.ArgumentParser:
    parser = cli.Parser(
        prog="python -m trainers.xla",
        description="Train a byte-level GPT with PyTorch/XLA over an SPMD device mesh; preset "
        "values apply where a flag is omitted.",
    )
    parser.add_argument("--mesh", metavar="DATA,FSDP", default=DEFAULT_MESH,
                        help="mesh degrees, multiplying to the device count of all hosts; "
                        "data 0 = the devices left (default: 0,1, all data-parallel)")
    parser.add_argument("--activation-checkpointing", choices=("none", "full"),
                        help="full: each block keeps only its input and recomputes its "
                        "forward in backward (default: none)")
    cli.add_schedule_arguments(parser)
    cli.add_storage_arguments(parser)
    cli.add_overrides_argument(parser, "--set warmup_steps=50 --set model.n_layer=4 --set "
                               "micro_batch_size=4 --set precision=bf16")
    cli.add_slow_rank_arguments(parser, rank="host (process)")
    # config_from_args reads every PyTorch-trainer flag: those this trainer does not offer are
    # None (the preset's value, or a --set), and it has one strategy.
    ours = {action.dest for action in parser._actions}
    parser.set_defaults(**{**{action.dest: None for action in torch_parser()._actions
                              if action.dest not in ours}, "strategy": "xla"})
    return parser


def check(config: TrainConfig, shape: meshes.MeshShape) -> None:
    """What the PyTorch trainer checks, over the mesh's devices, and what this one lacks."""
    if config.tp != 1 or config.pp != 1:
        raise ValueError(f"the XLA trainer shards over a (data, fsdp) mesh: tensor ({config.tp}) "
                         f"and pipeline ({config.pp}) degrees must be 1")
    if config.deepspeed is not None:
        raise ValueError("the XLA trainer does not run DeepSpeed: remove the DeepSpeed config")
    if config.activation_checkpointing == "selective":
        # torch's per-operator policies run in its dispatcher, which XLA's tracing bypasses.
        raise ValueError("the XLA trainer checkpoints whole blocks only: set "
                         "activation_checkpointing to full or none, not selective")
    if config.compile_blocks:
        raise ValueError("the XLA trainer compiles the whole step with XLA: remove "
                         "compile_blocks (torch.compile)")
    validate(config, shape.devices)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if env is None else env
    args = build_parser().parse_args(argv)
    # Installed first: a notice that arrives during start-up still stops after the first step.
    stop = StopRequest()
    stop.install()
    started = cli.configure(lambda: (
        cluster.process_from_env(env),  # a Reduction Server or evaluator replica runs no trainer
        config_from_args(args, env),
        meshes.parse_mesh(args.mesh),
    ))
    if isinstance(started, int):
        return started
    _, config, degrees = started

    # torch_xla is imported only now: the flags above are checked in any environment.
    import torch_xla.runtime as xr

    xr.use_spmd()  # before any tensor reaches a device
    process = hosts.host_process(env, xr.process_index(), xr.process_count())
    try:
        shape = meshes.resolve_mesh(*degrees, xr.global_runtime_device_count())
        check(config, shape)
    except ValueError as exc:
        events.error(process.rank, exc)
        return cli.EXIT_CONFIG

    def train() -> int:
        # Imported with torch_xla, which only this trainer's environment has.
        from trainers.xla.trainer import XlaTrainer

        hosts.join(process)
        return XlaTrainer(config, shape, process, stop).run()

    return cli.train(process.rank, train)
