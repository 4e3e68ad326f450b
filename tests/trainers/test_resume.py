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


def test_rotation_reports_each_deleted_checkpoint(single_run):
    """Keep-last-2: every older checkpoint is announced as deleted, so a list built from the
    events holds exactly what is on disk."""
    result, ckpt, _ = single_run
    saved = [e["step"] for e in result.of("checkpoint_saved")]
    deleted = result.of("checkpoint_deleted")
    assert [e["step"] for e in deleted] == saved[:-2]
    assert all(e["path"] == str(ckpt / f"step-{e['step']:08d}") for e in deleted)
    on_disk = sorted(int(p.name.removeprefix("step-")) for p in ckpt.iterdir())
    assert on_disk == sorted(set(saved) - {e["step"] for e in deleted})


def test_a_run_starts_from_the_checkpoint_the_job_names(ddp_run, tmp_path):
    """A resubmission: its own folder is empty, CP_RESUME_FROM names an earlier job's step 20;
    the losses from step 21 on are the original run's."""
    results, source = ddp_run
    named = source / "step-00000020"
    result = train([*COMMON, "--checkpoint-dir", str(tmp_path / "own")],
                   CP_RESUME_FROM=str(named))
    assert result.returncode == 0, result.stderr
    assert result.one("run_started")["resumed_from_step"] == 20
    assert result.one("resumed")["path"] == str(named)
    losses = result.losses()
    assert sorted(losses) == list(range(21, STEPS + 1))
    assert_losses_close(losses, results[0].losses(), 1e-5)


def test_the_runs_own_checkpoint_wins_over_the_named_one(ddp_run, tmp_path):
    """A resubmitted job preempted later resumes from its own newer checkpoint."""
    _, source = ddp_run
    own = tmp_path / "own"
    own.mkdir()
    shutil.copytree(source / "step-00000030", own / "step-00000030")
    result = train([*COMMON, "--checkpoint-dir", str(own)],
                   CP_RESUME_FROM=str(source / "step-00000010"))
    assert result.returncode == 0, result.stderr
    assert result.one("resumed")["step"] == 30


@pytest.mark.parametrize("damage", ["no_marker", "missing"])
def test_an_incomplete_named_checkpoint_is_refused_with_the_reason(ddp_run, tmp_path, damage):
    _, source = ddp_run
    named = tmp_path / "step-00000020"
    if damage == "no_marker":
        shutil.copytree(source / "step-00000020", named)
        (named / "COMMITTED").unlink()
    result = train([*COMMON, "--checkpoint-dir", str(tmp_path / "own")],
                   CP_RESUME_FROM=str(named))
    assert result.returncode != 0
    assert not result.of("step")
    (error,) = result.of("error")
    reason = "not a complete checkpoint" if damage == "no_marker" else "does not exist"
    assert reason in error["message"] and str(named) in error["message"]


def test_the_last_step_is_reported_without_checkpoints_or_evaluation():
    """Nothing forces the last step's loss early: its event still comes before run_finished,
    and final_loss is that step's."""
    result = train([*COMMON, "--strategy", "single", "--eval-every", "0",
                    "--set", "log_every=7"])
    assert result.returncode == 0, result.stderr
    losses = result.losses()
    assert sorted(losses) == [*range(7, STEPS, 7), STEPS]
    assert result.one("run_finished")["final_loss"] == losses[STEPS]
