"""Ray Train: the PyTorch trainer (trainers/train.py) inside a Ray `TorchTrainer`, one training
process per Ray Train worker, over the workers of the Ray cluster this runs on.

Submitted to a cluster as a Ray job (the Job Submission API runs it on the head node, where
`ray.init()` finds the cluster):

    python -m trainers.ray_train --workers 2 -- --preset tiny --steps 40 \
        --checkpoint-dir /tmp/ckpt

Everything after `--` is trainers.train's own arguments. Ray Train joins the workers in one
torch.distributed group (gloo on CPU) and sets RANK, WORLD_SIZE and LOCAL_RANK, so the trainer
runs as under torchrun: the same strategies, checkpoints (`step-N/` under the checkpoint dir,
which every worker must reach: a local path on one machine, or gs://) and the same event lines
on stdout, which Ray forwards to the job's logs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence


def train_loop(config: dict) -> None:
    """One Ray Train worker: the product's trainer with this worker's rank."""
    # Imported in the worker: the driver that submits the run never loads torch.
    from trainers.torch.main import main as train

    code = train(list(config["argv"]), dict(os.environ))
    sys.stdout.flush()
    if code != 0:
        raise RuntimeError(f"trainers.train exited {code} on this worker")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m trainers.ray_train",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Ray Train workers (ranks)")
    parser.add_argument("--cpus-per-worker", type=float, default=1.0)
    parser.add_argument("--gpus-per-worker", type=float, default=0.0)
    parser.add_argument("--storage-path", default="",
                        help="keep Ray Train's own results here; default: dropped after the run")
    parser.add_argument("--name", default="cp-ray-train")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, train_argv = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv \
        else (argv, [])
    args = build_parser().parse_args(own)
    if args.workers < 1:
        print("--workers must be at least 1", file=sys.stderr)
        return 2

    import ray
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    ray.init()
    # Ray Train's own results (reports, its checkpoint index) are not the product's: the
    # trainer's checkpoints go to its checkpoint dir. Without --storage-path they are dropped.
    with tempfile.TemporaryDirectory(prefix="ray-train-") as scratch:
        trainer = TorchTrainer(
            train_loop,
            train_loop_config={"argv": train_argv},
            torch_config=TorchConfig(backend="gloo" if args.gpus_per_worker == 0 else "nccl"),
            scaling_config=ScalingConfig(
                num_workers=args.workers, use_gpu=args.gpus_per_worker > 0,
                resources_per_worker={"CPU": args.cpus_per_worker,
                                      **({"GPU": args.gpus_per_worker}
                                         if args.gpus_per_worker else {})}),
            run_config=RunConfig(name=args.name, storage_path=args.storage_path or scratch),
        )
        result = trainer.fit()
    return 0 if result.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
