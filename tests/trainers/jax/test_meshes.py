"""The same job on any mesh is the same training: one device, (8,1,1), (2,4,1), (2,2,2); stopped
by SIGTERM and resumed; resumed from a checkpoint another mesh wrote."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.trainers.jax.conftest import (
    CHECKPOINTED_MESH,
    INTERRUPTED_MESH,
    MESHES,
    STEPS,
    STOP_STEP,
    train_jax,
)
from tests.trainers.replicas import assert_losses_close

pytestmark = pytest.mark.trainers

REL = 1e-4


def test_single_device_run_trains(single_device):
    losses = single_device.losses()
    assert sorted(losses) == list(range(1, STEPS + 1))
    assert losses[STEPS] < losses[1] - 1.0  # it learns, not merely runs
    started = single_device.one("run_started")
    assert started["dims"] == {"data": 1, "fsdp": 1, "tensor": 1}
    assert started["precision"] == "fp32"
    # One host has no other to be slower than: no per-host times (as one PyTorch process).
    assert not [e for e in single_device.of("step") if "rank_step_time_s" in e]


@pytest.mark.parametrize("mesh", MESHES)
def test_every_mesh_follows_the_single_device_trajectory(mesh, mesh_runs, single_device):
    result, _ = mesh_runs[mesh]
    data, fsdp, tensor = (int(d) for d in mesh.split(","))
    started = result.one("run_started")
    assert started["dims"] == {"data": data, "fsdp": fsdp, "tensor": tensor}
    assert started["devices"] == 8
    assert started["params"] == single_device.one("run_started")["params"]
    losses = result.losses()
    assert sorted(losses) == list(range(1, STEPS + 1))
    assert_losses_close(losses, single_device.losses(), REL)


def test_sigterm_saves_reports_and_the_resumed_run_continues_the_same_trajectory(
    interrupted, mesh_runs
):
    stopped, preempted, resumed = interrupted.stopped, interrupted.preempted, interrupted.resumed
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.stderr[-4000:]
    stop_step = preempted["step"]
    assert stop_step == STOP_STEP
    assert preempted["signal"] == "SIGTERM"
    assert preempted["checkpoint_path"] == str(interrupted.ckpt / f"step-{stop_step:08d}")
    saved = stopped.one("checkpoint_saved")
    assert (saved["step"], saved["path"]) == (stop_step, preempted["checkpoint_path"])
    assert stopped.of("run_finished") == []

    assert resumed.one("resumed")["step"] == stop_step
    assert resumed.one("resumed")["path"] == preempted["checkpoint_path"]
    assert resumed.one("run_started")["resumed_from_step"] == stop_step
    losses = resumed.losses()
    assert sorted(losses) == list(range(stop_step + 1, STEPS + 1))
    uninterrupted = mesh_runs[INTERRUPTED_MESH][0].losses()
    assert_losses_close(losses, uninterrupted, REL)
    assert_losses_close(stopped.losses(), uninterrupted, REL)


def test_a_checkpoint_of_one_mesh_resumes_on_another(mesh_runs, compile_cache, tmp_path):
    _, written = mesh_runs[CHECKPOINTED_MESH]
    step_10 = written / "step-00000010"
    resumed = train_jax(["--mesh", "2,4,1", "--eval-every", "0", "--resume-from", str(step_10),
                         "--checkpoint-dir", str(tmp_path / "own")], 8, compile_cache)
    assert resumed.one("resumed")["step"] == 10
    losses = resumed.losses()
    assert sorted(losses) == list(range(11, STEPS + 1))
    assert_losses_close(losses, mesh_runs[CHECKPOINTED_MESH][0].losses(), REL)
    assert_losses_close(losses, mesh_runs["2,4,1"][0].losses(), REL)
    # Its own checkpoint (the final one) goes to its own folder, not the one it resumed from.
    assert resumed.one("checkpoint_saved")["path"] == str(tmp_path / "own" / "step-00000020")


def test_checkpoints_are_committed_and_describe_their_mesh(mesh_runs):
    result, ckpt = mesh_runs[CHECKPOINTED_MESH]
    saved = result.of("checkpoint_saved")
    assert [e["step"] for e in saved] == [10, 20]
    for event in saved:
        folder = Path(event["path"])
        marker = json.loads((folder / "COMMITTED").read_text())
        assert marker["step"] == event["step"]
        assert marker["format"] == "orbax"
        assert marker["dims"] == {"data": 8, "fsdp": 1, "tensor": 1}
        assert marker["bytes"] == event["bytes"] > 0
        trainer = json.loads((folder / "trainer.json").read_text())
        assert trainer["data"]["next_step"] == event["step"] + 1
        assert (folder / "state").is_dir()
    assert sorted(p.name for p in ckpt.iterdir()) == ["step-00000010", "step-00000020"]
    assert [e["step"] for e in result.of("eval")] == [10, 20]
