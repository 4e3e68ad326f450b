"""Two data-parallel processes train exactly like one process with the same global batch."""

from __future__ import annotations

import pytest

from tests.trainers.conftest import COMMON, STEPS
from tests.trainers.replicas import Replica, assert_losses_close, child_env

pytestmark = pytest.mark.trainers

# fp32 Adam over 40 steps: a world of two sums each gradient in another order than one process,
# and the CPU's kernels (AVX2 or AVX-512) change the rounding again; the runs drift apart by about
# 2e-5 by the last steps. A wrong reduction (a sum for a mean, a missed rank) is off by percents.
REL = 1e-4


def test_every_rank_starts_and_only_rank_zero_reports(ddp_run):
    results, _ = ddp_run
    for rank, result in enumerate(results):
        started = result.one("run_started")
        assert (started["rank"], started["world_size"], started["strategy"]) == (rank, 2, "ddp")
    assert len(results[0].of("step")) == STEPS
    assert not results[1].of("step") and not results[1].of("checkpoint_saved")
    assert results[0].one("run_finished")["step"] == STEPS


def test_losses_match_the_single_process_run(single_run, ddp_run):
    single, ddp = single_run[0], ddp_run[0][0]
    assert ddp.losses().keys() == single.losses().keys()
    assert_losses_close(ddp.losses(), single.losses(), REL)
    for a, b in zip(ddp.of("eval"), single.of("eval"), strict=True):
        assert a["metrics"]["val_loss"] == pytest.approx(b["metrics"]["val_loss"], rel=REL)


def test_nproc_per_node_starts_the_processes_itself(single_run):
    """The path a multi-GPU Vertex replica takes (`--nproc-per-node auto` = GPU count), on CPU."""
    result = Replica.start([*COMMON, "--nproc-per-node", "2"], child_env()).finish()
    assert result.returncode == 0, result.stderr
    assert result.one("launching")["nproc_per_node"] == 2
    assert sorted(e["rank"] for e in result.of("run_started")) == [0, 1]
    assert_losses_close(result.losses(), single_run[0].losses(), REL)
