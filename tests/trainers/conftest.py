"""Reference runs shared by the trainer tests: each is a real training run, made once.

Both use the same global batch and seed, so their losses must agree step by step.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.trainers.replicas import Result, train, train_world

# Without the `trainers` extra (torch) there is nothing here to test.
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["test_*.py"]

STEPS = 40
# A small global batch (8 sequences of 64 bytes) keeps 2 processes on 2 shared cores quick.
COMMON = f"--preset tiny --steps {STEPS} --seed 7 --batch-size 8 --eval-every 10".split()


@pytest.fixture(scope="session")
def single_run(tmp_path_factory) -> tuple[Result, Path, Path]:
    """World size 1: checkpoints every 5 steps, the last 2 kept, the model exported."""
    base = tmp_path_factory.mktemp("single")
    ckpt, model = base / "ckpt", base / "model"
    result = train(
        [
            *COMMON,
            "--strategy",
            "single",
            "--checkpoint-every",
            "5",
            "--keep",
            "2",
            "--checkpoint-dir",
            str(ckpt),
            "--model-dir",
            str(model),
        ]
    )
    assert result.returncode == 0, result.stderr
    return result, ckpt, model


@pytest.fixture(scope="session")
def ddp_run(tmp_path_factory) -> tuple[list[Result], Path]:
    """World size 2 (RANK/WORLD_SIZE/MASTER_*), checkpoints every 10 steps, all kept."""
    ckpt = tmp_path_factory.mktemp("ddp") / "ckpt"
    results = train_world(
        [
            *COMMON,
            "--strategy",
            "ddp",
            "--checkpoint-every",
            "10",
            "--keep",
            "0",
            "--checkpoint-dir",
            str(ckpt),
        ]
    )
    for result in results:
        assert result.returncode == 0, result.stderr
    return results, ckpt
