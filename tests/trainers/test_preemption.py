"""SIGTERM (a spot preemption notice): finish the step, save, say so, exit non-zero; resume."""

from __future__ import annotations

import signal

import pytest

from tests.trainers.conftest import COMMON, STEPS
from tests.trainers.replicas import (
    Replica,
    assert_losses_close,
    child_env,
    finish_all,
    start_world,
    train_world,
)

pytestmark = pytest.mark.trainers


def test_sigterm_to_one_rank_stops_all_ranks_at_the_same_step_and_resume_continues(
    ddp_run, tmp_path
):
    reference = ddp_run[0][0].losses()
    ckpt = tmp_path / "ckpt"
    args = [*COMMON, "--checkpoint-every", "10", "--checkpoint-dir", str(ckpt)]

    replicas = start_world(args)
    try:
        replicas[0].wait_for(lambda e: e.get("event") == "step" and e["step"] >= 3)
        # On Vertex only the preempted replica may get the notice: signal rank 1, not rank 0.
        replicas[1].signal(signal.SIGTERM)
    finally:
        results = finish_all(replicas)

    # Exit 0 would make Vertex count the job as succeeded: every rank exits 128 + SIGTERM.
    assert [r.returncode for r in results] == [143, 143], results[0].stderr + results[1].stderr
    leader = results[0]
    preempted = leader.one("preempted")
    stopped_at = preempted["step"]
    assert 3 <= stopped_at < STEPS, "the run ended before the signal arrived"
    assert preempted["signal"] == "SIGTERM" and preempted["severity"] == "WARNING"
    saved = leader.of("checkpoint_saved")[-1]
    assert saved["step"] == stopped_at
    assert preempted["checkpoint_path"] == saved["path"] == str(ckpt / f"step-{stopped_at:08d}")
    # The checkpoint is saved first; `preempted` is the last word.
    assert leader.events[-2:] == [saved, preempted]
    assert not leader.of("run_finished")
    assert max(leader.losses()) == stopped_at
    assert_losses_close(leader.losses(), reference, 1e-6)

    resumed = train_world(args)
    for rank, result in enumerate(resumed):
        assert result.returncode == 0, result.stderr
        assert result.one("run_started")["resumed_from_step"] == stopped_at, rank
    leader = resumed[0]
    resumed_event = leader.one("resumed")
    assert (resumed_event["step"], resumed_event["path"]) == (stopped_at, saved["path"])
    losses = leader.losses()
    assert sorted(losses) == list(range(stopped_at + 1, STEPS + 1))
    assert_losses_close(losses, reference, 1e-6)
    assert leader.one("run_finished")["step"] == STEPS


def test_sigterm_without_a_checkpoint_directory_still_exits_non_zero():
    replica = Replica.start([*COMMON, "--steps", "300"], child_env())
    try:
        replica.wait_for(lambda e: e.get("event") == "step" and e["step"] >= 2)
        replica.signal(signal.SIGTERM)
    finally:
        result = replica.finish()
    assert result.returncode == 143, result.stderr
    preempted = result.one("preempted")
    assert preempted["checkpoint_path"] is None
    assert preempted["step"] == max(result.losses())
