"""Run several trainer runs, one after another, in ONE group of processes.

    python -m tests.trainers.strategy_group SPEC.json     (one process per rank, RANK etc. set)

Starting Python, torch and DeepSpeed costs seconds per process on the shared test machine, so
the strategy tests join the process group once and run every strategy's trainer in it. SPEC is
{"runs": [{"name": ..., "args": [trainer CLI args], "sigterm_at": STEP or null}, ...]}. Each run
goes through the trainer's own CLI parsing, validation and `Trainer.run()`; its events are
framed by `harness_run` / `harness_done` events (the latter with the exit code). `sigterm_at`
makes rank 1 send itself a real SIGTERM as step STEP starts, as a spot VM's notice would.
{"name": ..., "copy": [SRC, DST]} has rank 0 copy a folder (a checkpoint directory that
several later runs resume from) while the others wait.

With FAKE_GCS_ROOT set, gs:// URLs are served from that local folder through fsspec, the way
gcsfs serves them in production: an object store without folder renames.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys

import fsspec
import torch
import torch.distributed as dist
from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.local import LocalFileSystem

from trainers.job import cluster
from trainers.job.preemption import StopRequest
from trainers.loop import Dispatched
from trainers.torch import distributed, strategies
from trainers.torch.main import build_parser, config_from_args
from trainers.torch.trainer import Trainer
from trainers.torch.validation import validate


class FakeGCS(DirFileSystem):
    """gs://bucket/path -> $FAKE_GCS_ROOT/bucket/path."""

    protocol = "gs"

    def __init__(self, **kwargs) -> None:
        root = os.environ["FAKE_GCS_ROOT"]
        os.makedirs(root, exist_ok=True)
        # auto_mkdir: an object store has no folders to create before writing an object.
        super().__init__(path=root, fs=LocalFileSystem(auto_mkdir=True), **kwargs)


class SigtermAt(Trainer):
    sigterm_at: int | None = None

    def dispatch(self, step: int, lr: float) -> Dispatched:
        if step == self.sigterm_at and self.process.rank == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().dispatch(step, lr)


def main(spec_path: str) -> int:
    with open(spec_path) as f:
        spec = json.load(f)
    if os.environ.get("FAKE_GCS_ROOT"):
        fsspec.register_implementation("gs", FakeGCS, clobber=True)
    torch.set_num_threads(1)
    process = cluster.process_from_env(os.environ)
    _, device = distributed.init_process_group(process, timeout_s=60, device="cpu")
    stop = StopRequest()
    stop.install()
    try:
        for run in spec["runs"]:
            if "copy" in run:
                if process.rank == 0:
                    shutil.copytree(*run["copy"])
                dist.barrier()
                continue
            _frame("harness_run", name=run["name"])
            config = config_from_args(build_parser().parse_args(run["args"]), os.environ)
            validate(config, process.world_size)
            strategies.check_config(config, process)
            stop.received = None
            trainer = SigtermAt(config, process, device, stop)
            trainer.sigterm_at = run.get("sigterm_at")
            code = trainer.run()
            _frame("harness_done", name=run["name"], exit_code=code)
            dist.barrier()
    finally:
        distributed.destroy_process_group()
    return 0


def _frame(kind: str, **fields: object) -> None:
    """A line of the harness's own between runs, on stdout beside the trainer's events (which
    are the contract's only: trainers.events refuses names it does not know)."""
    print(json.dumps({"event": kind, "message": str(fields.get("name")), **fields}), flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
