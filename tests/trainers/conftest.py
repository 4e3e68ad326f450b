"""Reference runs shared by the trainer tests: each is a real training run, made once.

All use the same global batch and seed, so their losses must agree step by step. A session
fixture is made once per test process: the files that share one are a group of
tests/scheduling.py, so they run on one process and the reference is trained once
(trainers-reference-runs: `single_run`, `ddp_run`, the tensor x pipeline groups and
`strategy_group`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.trainers.replicas import Result, finish_all, start_world, train, train_world

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


# The strategy group: every strategy at world size 2 in one group of processes (see
# strategy_group.py). Its runs are 20 steps long: the warmup, whose learning rate does not depend
# on the run's length, so their losses must equal the first 20 of `single_run`.
GROUP_STEPS = 20
STRATEGIES = {
    "ddp": ["--strategy", "ddp"],
    "fsdp-full_shard": ["--strategy", "fsdp", "--fsdp-mode", "full_shard"],
    "fsdp-shard_grad_op": ["--strategy", "fsdp", "--fsdp-mode", "shard_grad_op"],
    "fsdp-hybrid_shard": ["--strategy", "fsdp", "--fsdp-mode", "hybrid_shard"],
    "zero1": ["--strategy", "zero1"],
    "zero2": ["--strategy", "zero2"],
    "zero3": ["--strategy", "zero3"],
}
SHARDED = [name for name in STRATEGIES if name != "ddp"]
ASYNC = ["ddp", "fsdp-full_shard"]
# Also run with activation checkpointing: ZeRO-3 gathers each layer inside the recomputed forward.
CHECKPOINTED = ["zero3"]
# These keep their checkpoints at gs:// URLs, served by a local fake GCS through fsspec.
ON_GCS = {"fsdp-hybrid_shard", "zero2"}
SIGTERM_AT = 7
# A step's reduction (which carries the stop flags) is waited for during the next step, unless
# the step ends in an evaluation or a checkpoint (7 does neither): the run stops after step 8.
STOPPED_AT = SIGTERM_AT + 1
GROUP_ARGS = [*COMMON, "--steps", str(GROUP_STEPS), "--checkpoint-every", "5", "--keep", "0"]


@dataclass
class Group:
    result: Result  # rank 0's events
    base: Path  # checkpoints under <base>/<name>/..., or <base>/gcs/bucket/<name>/... on gs://

    def events(self, run: str) -> list[dict]:
        out, inside = [], False
        for event in self.result.events:
            if event.get("event") == "harness_run":
                inside = event["name"] == run
            elif inside:
                out.append(event)
        assert out, f"no events for run {run!r}"
        return out

    def of(self, run: str, name: str) -> list[dict]:
        return [e for e in self.events(run) if e.get("event") == name]

    def losses(self, run: str) -> dict[int, float]:
        return {e["step"]: e["loss"] for e in self.of(run, "step")}

    def exit_code(self, run: str) -> int:
        return self.of(run, "harness_done")[0]["exit_code"]

    def checkpoint_root(self, name: str) -> str:
        return checkpoint_root(self.base, name)

    def local_root(self, name: str) -> Path:
        """Where the checkpoints of `name` are on this machine (the fake bucket for gs://)."""
        return self.base / "gcs" / "bucket" / name if name in ON_GCS else self.base / name


def checkpoint_root(base: Path, name: str) -> str:
    return f"gs://bucket/{name}" if name in ON_GCS else str(base / name)


@pytest.fixture(scope="session")
def strategy_group(tmp_path_factory) -> Group:
    """For every strategy: an uninterrupted run; for the sharded ones also a run that rank 1
    SIGTERMs at step 7 and its resumption; for ddp and fsdp a run with async checkpoints."""
    base = tmp_path_factory.mktemp("group")
    runs = []
    for name, args in STRATEGIES.items():
        root = checkpoint_root(base, name)
        runs.append(
            {"name": name, "args": [*GROUP_ARGS, *args, "--checkpoint-dir", f"{root}/full"]}
        )
        if name in SHARDED:
            resume = [*GROUP_ARGS, *args, "--checkpoint-dir", f"{root}/resume"]
            runs.append({"name": f"{name}/stopped", "args": resume, "sigterm_at": SIGTERM_AT})
            runs.append({"name": f"{name}/resumed", "args": resume})
        if name in CHECKPOINTED:
            # The same run with every block's activations recomputed in backward.
            recomputed = [*args, "--activation-checkpointing", "full"]
            runs.append({"name": f"{name}/recomputed", "args": [*GROUP_ARGS, *recomputed]})
        if name in ASYNC:
            background = [*args, "--set", "async_checkpoint=true"]
            runs.append(
                {
                    "name": f"{name}/async",
                    "args": [*GROUP_ARGS, *background, "--checkpoint-dir", f"{root}/async"],
                }
            )
    spec = base / "spec.json"
    spec.write_text(json.dumps({"runs": runs}))
    replicas = start_world(
        [str(spec)], module="tests.trainers.strategy_group", FAKE_GCS_ROOT=str(base / "gcs")
    )
    results = finish_all(replicas, timeout=300)
    for result in results:
        assert result.returncode == 0, result.stderr[-5000:]
    return Group(results[0], base)
