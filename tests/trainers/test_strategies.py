"""Every strategy at world size 2 trains exactly like one process, and every sharded one resumes
a SIGTERM'd run to the same losses as an uninterrupted run."""

from __future__ import annotations

import json

import pytest
import torch
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

from tests.trainers.conftest import (
    ASYNC,
    CHECKPOINTED,
    GROUP_STEPS,
    ON_GCS,
    SHARDED,
    STOPPED_AT,
    STRATEGIES,
)
from tests.trainers.replicas import assert_losses_close

pytestmark = pytest.mark.trainers

REL = 1e-5


@pytest.mark.parametrize("name", STRATEGIES)
def test_losses_match_the_single_process_run(name, single_run, strategy_group):
    reference = {s: v for s, v in single_run[0].losses().items() if s <= GROUP_STEPS}
    assert strategy_group.exit_code(name) == 0
    losses = strategy_group.losses(name)
    assert sorted(losses) == list(range(1, GROUP_STEPS + 1))
    assert_losses_close(losses, reference, REL)
    single_evals = {e["step"]: e["metrics"]["val_loss"] for e in single_run[0].of("eval")}
    for event in strategy_group.of(name, "eval"):
        assert event["metrics"]["val_loss"] == pytest.approx(single_evals[event["step"]], rel=REL)
    for event in strategy_group.of(name, "step"):
        assert event["tokens_per_s"] > 0 and event["step_time_s"] > 0


@pytest.mark.parametrize("name", CHECKPOINTED)
def test_activation_checkpointing_trains_to_the_same_losses(name, strategy_group):
    run = f"{name}/recomputed"
    assert strategy_group.exit_code(run) == 0
    assert_losses_close(strategy_group.losses(run), strategy_group.losses(name), 1e-6)


@pytest.mark.parametrize("name", SHARDED)
def test_sigterm_then_resume_gives_the_uninterrupted_losses(name, strategy_group):
    stopped, resumed = f"{name}/stopped", f"{name}/resumed"
    assert strategy_group.exit_code(stopped) == 143
    root = strategy_group.checkpoint_root(name)
    saved = strategy_group.of(stopped, "checkpoint_saved")[-1]
    preempted = strategy_group.of(stopped, "preempted")[0]
    assert preempted["signal"] == "SIGTERM" and preempted["step"] == STOPPED_AT
    assert saved["path"] == preempted["checkpoint_path"] == f"{root}/resume/step-{STOPPED_AT:08d}"
    assert strategy_group.events(stopped)[-3:-1] == [saved, preempted]  # then harness_done

    assert strategy_group.exit_code(resumed) == 0
    assert strategy_group.of(resumed, "resumed")[0]["path"] == saved["path"]
    losses = strategy_group.losses(resumed)
    assert sorted(losses) == list(range(STOPPED_AT + 1, GROUP_STEPS + 1))
    assert_losses_close(losses, strategy_group.losses(name), 1e-6)


@pytest.mark.parametrize("name", SHARDED)
def test_every_rank_writes_its_shard(name, strategy_group):
    folder = strategy_group.local_root(name) / "full" / f"step-{GROUP_STEPS:08d}"
    files = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    if name.startswith("fsdp"):
        assert {"dcp/.metadata", "dcp/__0_0.distcp", "dcp/__1_0.distcp"} <= files
    else:
        assert {f"deepspeed/zero_pp_rank_{r}_mp_rank_00_optim_states.pt" for r in (0, 1)} <= files
    assert {"COMMITTED", "trainer.pt", "config.json", "rng-rank-00001.pt"} <= files
    marker = json.loads((folder / "COMMITTED").read_text())
    assert marker["world_size"] == 2 and marker["format"] in ("dcp", "deepspeed")


@pytest.mark.parametrize("name", sorted(ON_GCS))
def test_gs_checkpoints_commit_by_the_marker_alone(name, strategy_group):
    """Object stores cannot rename a folder: the step folder is written in place, and it
    counts once its COMMITTED object exists."""
    saved = strategy_group.of(name, "checkpoint_saved")
    assert [e["path"] for e in saved] == [
        f"gs://bucket/{name}/full/step-{s:08d}" for s in range(5, GROUP_STEPS + 1, 5)
    ]
    names = sorted(p.name for p in (strategy_group.local_root(name) / "full").iterdir())
    assert names == [f"step-{s:08d}" for s in range(5, GROUP_STEPS + 1, 5)]  # no .tmp- folders


@pytest.mark.parametrize("name", ASYNC)
def test_async_checkpoints_hold_the_same_state_as_synchronous_ones(name, strategy_group, tmp_path):
    run = f"{name}/async"
    assert strategy_group.losses(run) == strategy_group.losses(name)
    events = strategy_group.events(run)
    saved = [e["step"] for e in events if e["event"] == "checkpoint_saved"]
    assert saved == list(range(5, GROUP_STEPS + 1, 5))
    # Committed after its step, at the latest when the next checkpoint begins (one in flight).
    position = {(e["event"], e.get("step")): i for i, e in enumerate(events)}
    for step in saved:
        committed = position["checkpoint_saved", step]
        assert position["step", step] < committed
        assert committed < position.get(("step", step + 6), len(events))

    sync = strategy_group.local_root(name) / "full" / "step-00000010"
    background = strategy_group.local_root(name) / "async" / "step-00000010"
    if name == "ddp":
        pairs = [(sync / f, background / f) for f in ("model.pt", "optimizer.pt")]
    else:  # DCP shards, gathered into one file each
        dcp_to_torch_save(sync / "dcp", tmp_path / "sync.pt")
        dcp_to_torch_save(background / "dcp", tmp_path / "async.pt")
        pairs = [(tmp_path / "sync.pt", tmp_path / "async.pt")]
    for a, b in pairs:
        _assert_same(torch.load(a, weights_only=True), torch.load(b, weights_only=True))


def _assert_same(a, b) -> None:
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a == b
