"""Resume from the newest complete checkpoint; half-written ones are ignored and cleaned up."""

from __future__ import annotations

import shutil

import pytest

from tests.trainers.conftest import COMMON, STEPS
from tests.trainers.replicas import assert_losses_close, train

pytestmark = pytest.mark.trainers


def test_half_written_checkpoints_are_ignored_and_the_previous_one_is_used(ddp_run, tmp_path):
    results, source = ddp_run
    ckpt = tmp_path / "ckpt"
    shutil.copytree(source, ckpt)
    assert sorted(p.name for p in ckpt.iterdir()) == [f"step-{s:08d}" for s in (10, 20, 30, 40)]
    # What a process killed -9 while saving leaves behind: a temporary folder (local disks) ...
    (ckpt / "step-00000030").rename(ckpt / ".tmp-step-00000030-0badf00d")
    # ... a step folder without its marker (object stores write in place, marker last) ...
    (ckpt / "step-00000040" / "COMMITTED").unlink()
    # ... or a marker cut short.
    shutil.copytree(ckpt / "step-00000020", ckpt / "step-00000035")
    (ckpt / "step-00000035" / "COMMITTED").write_text('{"step": 3')

    # World size 1 resuming a world-size-2 DDP checkpoint: the state is replicated.
    result = train([*COMMON, "--checkpoint-every", "10", "--checkpoint-dir", str(ckpt)])
    assert result.returncode == 0, result.stderr
    assert result.one("run_started")["resumed_from_step"] == 20
    assert result.one("resumed")["path"] == str(ckpt / "step-00000020")
    discarded = {e["path"] for e in result.of("checkpoint_discarded")}
    assert discarded == {
        str(ckpt / n) for n in (".tmp-step-00000030-0badf00d", "step-00000035", "step-00000040")
    }
    losses = result.losses()
    assert sorted(losses) == list(range(21, STEPS + 1))
    assert_losses_close(losses, results[0].losses(), 1e-5)
    # Keep-last-3 (the default): the old step 10 went once 30 and 40 were saved again.
    assert sorted(p.name for p in ckpt.iterdir()) == [f"step-{s:08d}" for s in (20, 30, 40)]


def test_a_finished_run_restarted_does_not_train_again(single_run, tmp_path):
    """Vertex may restart a replica after the job's work is done: it must finish, not redo it."""
    _, source, _ = single_run
    ckpt = tmp_path / "ckpt"
    shutil.copytree(source, ckpt)
    result = train([*COMMON, "--checkpoint-dir", str(ckpt)])
    assert result.returncode == 0, result.stderr
    assert result.one("resumed")["step"] == STEPS
    assert not result.of("step") and not result.of("checkpoint_saved")
    assert result.one("run_finished")["final_loss"] == single_run[0].losses()[STEPS]
