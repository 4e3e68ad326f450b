"""PyTorch/XLA on the CPU PJRT device trains with the eager PyTorch trainer's losses, a run
stopped by SIGTERM resumes to the losses of the uninterrupted one, and two hosts stop together
when only one gets the signal."""

from __future__ import annotations

import json

import pytest

from tests.trainers.replicas import assert_losses_close
from tests.trainers.xla.conftest import SLOW_HOST_S, STEPS, STOP_STEP, train_eager, train_xla
from vertexplan.health import straggler_verdict

pytestmark = pytest.mark.trainers

REL = 1e-4


def test_on_one_cpu_device_the_losses_are_the_eager_runs(xla_run, eager_run) -> None:
    assert sorted(xla_run.losses()) == list(range(1, STEPS + 1))
    assert_losses_close(xla_run.losses(), eager_run.losses(), REL)
    started = xla_run.one("run_started")
    assert (started["strategy"], started["dims"], started["devices"]) == (
        "xla", {"data": 1, "fsdp": 1}, 1)
    assert started["params"] == eager_run.one("run_started")["params"]  # the head stays tied
    assert xla_run.one("run_finished")["final_loss"] == xla_run.losses()[STEPS]
    # XLA compiles the first steps' programs (torch_xla's CompileTime): `compile` phases,
    # printed before the step events that follow them (step 1's is printed once step 2 is
    # dispatched: both compiles), inside the steps' own times; the eager run has none.
    compiles = {e["step"]: e["seconds"] for e in xla_run.of("phase") if e["phase"] == "compile"}
    steps_s = sum(e["step_time_s"] for e in xla_run.of("step"))
    assert 1 in compiles and 0 < sum(compiles.values()) <= steps_s, (compiles, steps_s)
    assert not [e for e in eager_run.of("phase") if e["phase"] == "compile"]


def test_an_spmd_mesh_of_data_and_fsdp_trains_the_same_losses(xla_python, eager_run) -> None:
    """Four CPU devices, the batch split 2 x 2, the matrices split over fsdp: the compiler's
    collectives give the single replica's arithmetic."""
    result = train_xla(xla_python, ["--mesh", "2,2"], devices=4)
    started = result.one("run_started")
    assert (started["dims"], started["devices"]) == ({"data": 2, "fsdp": 2}, 4)
    assert started["sharded_parameters"] > 0
    assert_losses_close(result.losses(), eager_run.losses(), REL)
    assert sorted(result.losses()) == list(range(1, STEPS + 1))


def test_sigterm_saves_says_preempted_and_exits_143(interrupted) -> None:
    stopped = interrupted.stopped
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert interrupted.preempted["signal"] == "SIGTERM"
    assert interrupted.preempted["step"] == STOP_STEP
    saved = stopped.one("checkpoint_saved")
    assert saved["step"] == STOP_STEP
    folder = interrupted.ckpt / f"step-{STOP_STEP:08d}"
    assert interrupted.preempted["checkpoint_path"] == saved["path"] == str(folder)
    assert (folder / "COMMITTED").exists() and (folder / "model.pt").exists()
    # The checkpoint is saved first; `preempted` is the last word.
    assert stopped.events[-2:] == [saved, interrupted.preempted]
    assert max(stopped.losses()) == STOP_STEP and not stopped.of("run_finished")


def test_the_resumed_run_continues_to_the_uninterrupted_losses(interrupted, xla_run,
                                                               eager_run) -> None:
    resumed = interrupted.resumed
    assert resumed.one("run_started")["resumed_from_step"] == STOP_STEP
    assert resumed.one("resumed")["path"] == str(interrupted.ckpt / f"step-{STOP_STEP:08d}")
    assert sorted(resumed.losses()) == list(range(STOP_STEP + 1, STEPS + 1))
    assert_losses_close(resumed.losses(), xla_run.losses(), 1e-6)
    assert_losses_close({**interrupted.stopped.losses(), **resumed.losses()},
                        eager_run.losses(), REL)
    assert resumed.one("checkpoint_saved")["step"] == STEPS


def test_the_eager_trainer_resumes_an_xla_checkpoint(interrupted, eager_run, tmp_path) -> None:
    """The checkpoint is the ddp strategy's format: a job can move between TPU and GPU."""
    folder = interrupted.ckpt / f"step-{STOP_STEP:08d}"
    result = train_eager(["--resume-from", str(folder), "--checkpoint-dir", str(tmp_path)])
    assert result.one("resumed")["step"] == STOP_STEP
    assert sorted(result.losses()) == list(range(STOP_STEP + 1, STEPS + 1))
    assert_losses_close(result.losses(), eager_run.losses(), REL)


def test_sigterm_to_one_host_stops_every_host_at_the_same_step(two_hosts) -> None:
    """On a multi-VM slice the notice may reach one VM: the hosts gather their stop flags after
    every step, so both stop after step 5 and write the emergency checkpoint together."""
    host_0, host_1 = two_hosts.stopped
    assert [host_0.returncode, host_1.returncode] == [143, 143], host_0.stderr + host_1.stderr
    assert host_0.one("run_started")["world_size"] == 2
    preempted = host_0.one("preempted")  # host 0 speaks for the run, host 1 got the signal
    assert (preempted["signal"], preempted["step"]) == ("SIGTERM", STOP_STEP)
    saved = host_0.one("checkpoint_saved")
    folder = two_hosts.ckpt / f"step-{STOP_STEP:08d}"
    assert saved["step"] == STOP_STEP and preempted["checkpoint_path"] == str(folder)
    assert host_0.events[-2:] == [saved, preempted]
    assert max(host_0.losses()) == STOP_STEP and not host_1.of("preempted")


def test_a_slowed_host_is_named_from_host_0s_step_events(two_hosts) -> None:
    """Each host's own step time (to the end of its forward's tracing) travels with the step's
    stop flags; host 1, slowed on purpose, is named by the control plane's straggler rule."""
    reports = {e["step"]: e["rank_step_time_s"] for e in two_hosts.stopped[0].of("step")}
    assert sorted(reports) == list(range(1, STOP_STEP + 1)), reports
    assert all(len(r) == 2 and r[1] >= SLOW_HOST_S for r in reports.values()), reports
    assert straggler_verdict(list(reports.values())).ranks == (1,)
    assert "rank_step_time_s" not in two_hosts.resumed.of("step")[0]  # one host: none


def test_an_fsdp_checkpoint_is_written_by_every_host_and_resumes_exactly(two_hosts,
                                                                         xla_run) -> None:
    """Sharded over fsdp, the state is saved with torch_xla's distributed checkpointing (each
    host its own shards, no gather to host 0); one host on the same mesh resumes it to the
    uninterrupted run's losses."""
    folder = two_hosts.ckpt / f"step-{STOP_STEP:08d}"
    assert (folder / "COMMITTED").exists() and (folder / "dcp" / ".metadata").exists()
    assert not (folder / "model.pt").exists()
    written = sorted(p.name for p in (folder / "dcp").glob("*.distcp"))
    assert written == ["__0_0.distcp", "__1_0.distcp"]  # one file per host
    assert json.loads((folder / "COMMITTED").read_text())["format"] == "xla_dcp"
    resumed = two_hosts.resumed
    assert resumed.one("resumed")["step"] == STOP_STEP
    assert sorted(resumed.losses()) == list(range(STOP_STEP + 1, STEPS + 1))
    assert_losses_close({**two_hosts.stopped[0].losses(), **resumed.losses()},
                        xla_run.losses(), REL)


def test_full_activation_checkpointing_recomputes_blocks_to_the_same_losses(
        xla_python, xla_run, tmp_path) -> None:
    """Each block's forward runs again in backward: the compiled step holds the optimization
    barriers that keep XLA from reusing the forward's activations, and the losses do not move.
    Four steps: inside the warm-up, the learning rate does not depend on the run's length."""
    graphs = tmp_path / "graphs.hlo"
    result = train_xla(xla_python, ["--steps", "4", "--activation-checkpointing", "full"],
                       XLA_SAVE_TENSORS_FILE=str(graphs), XLA_SAVE_TENSORS_FMT="hlo")
    assert sorted(result.losses()) == [1, 2, 3, 4]
    assert_losses_close(result.losses(), xla_run.losses(), 1e-5)
    saved = "".join(p.read_text() for p in tmp_path.glob("graphs.hlo*"))  # one per process
    assert saved.count("opt-barrier") >= 2  # around each of the tiny preset's 2 blocks
