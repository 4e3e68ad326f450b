"""Sharded strategies as Vertex runs them: separate processes that a preemption stops for real.

- SIGTERM (the spot notice): both ranks finish the step, every rank writes its shard of the
  emergency checkpoint, `preempted`, exit 143; new processes resume from it.
- SIGKILL while a checkpoint is being written (the notice ran out): the half-written folder is
  ignored and removed, and the run resumes from the previous complete checkpoint.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.trainers.conftest import GROUP_ARGS, GROUP_STEPS, STRATEGIES
from tests.trainers.replicas import assert_losses_close, finish_all, start_world, train_world
from trainers.job.faults import ENV as PAUSE_ENV

pytestmark = pytest.mark.trainers


def test_fsdp_ranks_stopped_by_sigterm_exit_143_and_new_processes_resume(strategy_group, tmp_path):
    name = "fsdp-full_shard"
    ckpt = tmp_path / "ckpt"
    args = [*GROUP_ARGS, *STRATEGIES[name], "--checkpoint-dir", str(ckpt)]
    replicas = start_world(args)
    try:
        replicas[0].wait_for(lambda e: e.get("event") == "step" and e["step"] >= 3)
        replicas[1].signal(signal.SIGTERM)  # only one replica gets the notice
    finally:
        results = finish_all(replicas)
    assert [r.returncode for r in results] == [143, 143], results[0].stderr + results[1].stderr
    preempted = results[0].one("preempted")
    stopped_at = preempted["step"]
    assert 3 <= stopped_at < GROUP_STEPS, "the run ended before the signal arrived"
    assert preempted["checkpoint_path"] == str(ckpt / f"step-{stopped_at:08d}")
    assert (ckpt / f"step-{stopped_at:08d}" / "dcp" / "__1_0.distcp").is_file()

    resumed = train_world(args)
    for result in resumed:
        assert result.returncode == 0, result.stderr
    assert resumed[0].one("resumed")["step"] == stopped_at
    losses = resumed[0].losses()
    assert sorted(losses) == list(range(stopped_at + 1, GROUP_STEPS + 1))
    assert_losses_close(losses, strategy_group.losses(name), 1e-6)


def test_zero3_killed_while_writing_a_checkpoint_resumes_from_the_previous_one(
    strategy_group, tmp_path
):
    name = "zero3"
    ckpt = tmp_path / "ckpt"
    args = [*GROUP_ARGS, *STRATEGIES[name], "--checkpoint-dir", str(ckpt)]
    # Every rank pauses once its ZeRO shards of step 10 are on disk, before the trainer state
    # and the marker: the moment to pull the plug.
    replicas = start_world(args, **{PAUSE_ENV: "checkpoint_write:10"})
    try:
        # Two processes start DeepSpeed and train ten steps first: minutes on a loaded machine.
        paused = replicas[0].wait_for(lambda e: e.get("event") == "paused", timeout=300)
    finally:
        for replica in replicas:
            replica.kill()  # SIGKILL
        finish_all(replicas)
    half_written = paused["path"]
    assert half_written.startswith(str(ckpt / ".tmp-step-00000010-"))
    written = {p.name for p in Path(half_written).rglob("*")}
    assert "zero_pp_rank_1_mp_rank_00_optim_states.pt" in written
    assert not written & {"COMMITTED", "trainer.pt"}
    assert sorted(p.name for p in ckpt.iterdir()) == [
        half_written.rsplit("/", 1)[1],
        "step-00000005",
    ]

    resumed = train_world(args)
    for result in resumed:
        assert result.returncode == 0, result.stderr
    leader = resumed[0]
    assert leader.one("run_started")["resumed_from_step"] == 5
    assert [e["path"] for e in leader.of("checkpoint_discarded")] == [half_written]
    losses = leader.losses()
    assert sorted(losses) == list(range(6, GROUP_STEPS + 1))
    assert_losses_close(losses, strategy_group.losses(name), 1e-6)
    assert [e["step"] for e in leader.of("checkpoint_saved")] == [10, 15, 20]
