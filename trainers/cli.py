"""The command line every trainer shares: the flags of the schedule, checkpoints, export and data
(preset values apply where a flag is omitted; Vertex's variables where a path flag is), `--set`
for any other setting, and how a start ends before training does.

Each trainer adds its own flags (the PyTorch trainer's strategies, the JAX trainer's mesh) and
its own way of joining the others (trainers/torch/main.py, trainers/jax/train.py,
trainers/xla/train.py).

Exit codes, the same for every trainer: 0 finished (or a replica that runs no trainer); 1 error;
2 bad configuration; 128+N stopped by signal N after an emergency checkpoint (143 for SIGTERM,
130 for SIGINT).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import typing
from collections.abc import Callable, Mapping
from dataclasses import replace

from contract import events as contract_events
from trainers import events
from trainers.config import PRESETS, Config, apply_overrides
from trainers.job.cluster import NotATrainer

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
# A checkpoint of an earlier job to start from (a resubmission); the run's own checkpoints win.
RESUME_ENV = "CP_RESUME_FROM"

T = typing.TypeVar("T")


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        # Also as a JSON event: on Vertex stderr text reaches the control plane unclassified.
        events.emit(contract_events.ERROR, message, severity="ERROR", rank=None,
                    error_type="UsageError")
        super().error(message)


def add_schedule_arguments(parser: argparse.ArgumentParser, batch_over: str = "ranks") -> None:
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
    # Vertex passes a trial's parameters as --<parameter_id>=<value> (VERTEX_FACTS.md A1);
    # argparse reads `--name=value` and `--name value` alike.
    parser.add_argument(
        "--batch-size",
        "--batch_size",
        dest="batch_size",
        type=int,
        help=f"GLOBAL batch in sequences, over all {batch_over} (tiny: 16, small: 64)",
    )
    parser.add_argument("--lr", "--learning-rate", "--learning_rate", dest="lr", type=float,
                        help="peak learning rate (tiny: 3e-3, small: 1e-3)")
    parser.add_argument("--warmup-steps", "--warmup_steps", dest="warmup_steps", type=int,
                        help="linear warm-up steps before the cosine decay (tiny: 20)")
    parser.add_argument("--weight-decay", "--weight_decay", dest="weight_decay", type=float,
                        help="AdamW weight decay (default: 0.1)")


def add_storage_arguments(parser: argparse.ArgumentParser, exported: str = "model") -> None:
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
        "--model-dir",
        help=f"final {exported} export; default: $AIP_MODEL_DIR; neither = no export",
    )
    parser.add_argument(
        "--data", help="a text file to train on (default: the Python standard library)"
    )
    parser.add_argument(
        "--eval-every", type=int, help="evaluate every N steps; 0 = never (tiny: 100, small: 500)"
    )


def add_overrides_argument(parser: argparse.ArgumentParser, example: str) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"any other setting, e.g. {example}",
    )


def add_slow_rank_arguments(parser: argparse.ArgumentParser, rank: str = "rank") -> None:
    """A straggler for tests of straggler detection (never in a real job): the PyTorch
    trainer's flags, for the JAX and PyTorch/XLA trainers, whose ranks are hosts."""
    parser.add_argument("--debug-slow-rank", type=int, metavar="R",
                        help=f"test fault: {rank} R sleeps --debug-slow-seconds in every step")
    parser.add_argument("--debug-slow-seconds", type=float, metavar="S",
                        help="how long --debug-slow-rank sleeps per step")


def run_flags(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, typing.Any]:
    """The shared flags' values (None where omitted), the paths defaulting to Vertex's
    variables."""
    return {
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


def with_flags(config: Config, flags: Mapping[str, typing.Any], overrides: list[str]) -> Config:
    """The flags that were given over `config`, then the --set overrides."""
    config = replace(config, **{k: v for k, v in flags.items() if v is not None})
    return apply_overrides(config, overrides)


def configure(read: Callable[[], T]) -> T | int:
    """What `read` returns, or the exit code of a start that ends here: a replica that runs no
    trainer (0, with a not_a_trainer event) or a bad configuration (2, with an error event).
    Anything wrong here is the caller's to fix, before any work."""
    try:
        return read()
    except NotATrainer as exc:
        events.emit(contract_events.NOT_A_TRAINER, f"{exc.reason}: no trainer runs here, exiting 0",
                    task_type=exc.task_type)
        return EXIT_OK
    except ValueError as exc:
        events.error(None, exc)
        return EXIT_CONFIG


def checked(rank: int | None, check: Callable[[], object]) -> int | None:
    """None when `check` passes, else EXIT_CONFIG after an error event."""
    try:
        check()
    except ValueError as exc:
        events.error(rank, exc)
        return EXIT_CONFIG
    return None


def train(rank: int | None, run: Callable[[], int]) -> int:
    """The run's exit code; an exception is an error event, its traceback and exit 1."""
    try:
        return run()
    except Exception as exc:
        events.error(rank, exc)
        traceback.print_exc(file=sys.stderr)
        return EXIT_ERROR


def exit_now(code: int) -> typing.NoReturn:
    """Leave without the interpreter's and the C++ runtime's teardown. Everything that matters
    is already out: events are flushed line by line, checkpoints committed and fsync'd, the
    process group left. What remains is static destruction of the runtime's objects, where a
    gloo or store thread torn down out of order can still abort the process (`terminate called
    without an active exception`, exit -6) after a clean run, and a replica's exit code is
    what Vertex judges the job by."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
