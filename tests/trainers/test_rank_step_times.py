"""Per-rank step times: a rank slowed on purpose (--debug-slow-rank) is named by the control
plane's straggler rule from the step events alone; an even run (the ddp_run fixture) names
nobody, and says when its evaluations and checkpoint saves begin."""

from __future__ import annotations

import pytest

from tests.trainers.conftest import COMMON
from tests.trainers.replicas import train_world
from vertexplan.health import straggler_verdict

pytestmark = pytest.mark.trainers


def _reports(result) -> list[list[float]]:
    return [e["rank_step_time_s"] for e in result.of("step") if "rank_step_time_s" in e]


def test_a_slowed_rank_is_named_from_the_step_events() -> None:
    results = train_world([*COMMON, "--strategy", "ddp", "--steps", "30", "--eval-every", "0",
                           "--debug-slow-rank", "1", "--debug-slow-seconds", "0.05"])
    assert [r.returncode for r in results] == [0, 0], results[1].stderr[-2000:]
    reports = _reports(results[0])
    assert [e["step"] for e in results[0].of("step") if "rank_step_time_s" in e] == [10, 20, 30]
    assert all(len(r) == 2 and r[1] >= 0.05 > r[0] for r in reports), reports
    assert straggler_verdict(reports).ranks == (1,)


def test_an_even_run_names_no_rank(ddp_run) -> None:
    reports = _reports(ddp_run[0][0])
    assert len(reports) == 4 and all(len(r) == 2 for r in reports)
    assert straggler_verdict(reports).ranks == ()
    # Evaluations and checkpoint saves say when they begin: quiet on purpose, not hung.
    phases = [(e["phase"], e.get("begins", False)) for e in ddp_run[0][0].of("phase")]
    assert ("eval", True) in phases and ("checkpoint_save", True) in phases
