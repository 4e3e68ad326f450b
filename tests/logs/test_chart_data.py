"""What the job page's charts are handed (controlplane/logs/chart_data.py): a compile step left
out of the step-time and throughput series so their scale fits the steady steps, markers'
labels one per step and on separate lanes when close, and a colour of its own for every line
(metrics.json hands them over: tests/runs/pages/test_detail.py)."""

from __future__ import annotations

from typing import Any

from controlplane.core.palette import BASE_COLORS
from controlplane.logs import chart_data


def test_a_tpu_runs_compile_step_is_left_out_and_named() -> None:
    # Attempt 1: a 61 s XLA compile, then 0.2 s steps; attempt 2 (resumed) compiles again.
    steps = [1, 2, 3, 4, 5, 6, 4, 5, 6, 7, 8]
    attempts = [1] * 6 + [2] * 5
    times = [61.0, 0.21, 0.2, 0.19, 0.2, 0.2, 45.0, 0.2, 0.2, 0.22, 0.2]
    body: dict[str, Any] = {"steps": steps, "attempt": attempts, "step_time_s": list(times),
                            "tokens_per_s": [10.0] + [3000.0] * 5 + [14.0] + [3000.0] * 4,
                            "mfu": [None] * 11, "loss": [3.0] * 11}
    chart_data.leave_out_compile_steps(body)
    assert body["compile_steps"] == [{"attempt": 1, "step": 1, "step_time_s": 61.0},
                                     {"attempt": 2, "step": 4, "step_time_s": 45.0}]
    assert body["step_time_s"][0] is None and body["step_time_s"][6] is None
    assert max(t for t in body["step_time_s"] if t is not None) == 0.22
    assert body["tokens_per_s"][0] is None and body["tokens_per_s"][6] is None
    assert body["loss"] == [3.0] * 11  # the loss of a compile step is a real loss


def test_two_compiling_steps_then_steady_ones() -> None:
    times = [50.0, 12.0, 0.3, 0.31, 0.29, 0.3]
    assert chart_data.compile_steps(list(range(1, 7)), [1] * 6, times) == [0, 1]


def test_no_step_is_left_out_of_an_even_run_or_one_too_short_to_judge() -> None:
    even = [0.5, 0.52, 0.49, 0.6, 0.51, 0.5]
    assert chart_data.compile_steps(list(range(1, 7)), [1] * 6, even) == []
    # A slow first step with fewer than three steps after it: nothing to measure it against.
    assert chart_data.compile_steps([1, 2, 3], [1] * 3, [60.0, 0.2, 0.2]) == []
    # A slow step in the middle is the run's own news, not a compile step.
    middle = [0.2, 0.2, 9.0, 0.2, 0.2, 0.2]
    assert chart_data.compile_steps(list(range(1, 7)), [1] * 6, middle) == []
    # Missing step times are not steps.
    assert chart_data.compile_steps([1, 2], [1, 1], [None, None]) == []


def test_markers_at_one_step_share_a_label_and_close_ones_take_lanes() -> None:
    markers = [{"kind": "preempted", "step": 120, "t": "a"},
               {"kind": "replica_restarted", "step": 120, "t": "b"},
               {"kind": "resumed", "step": 118, "t": "c"},
               {"kind": "preempted", "step": 900, "t": "d"}]
    labels = chart_data.marker_labels(markers, list(range(1, 1001)))
    assert [(label["step"], label["text"], label["lane"]) for label in labels] == [
        (118, "resumed", 0), (120, "preempted, restart", 1), (900, "preempted", 0)]
    assert labels[1]["kinds"] == ["preempted", "replica_restarted"]
    assert chart_data.marker_labels([{"kind": "resumed", "step": None}], [1, 2]) == []


def test_labels_cycle_through_the_lanes() -> None:
    markers = [{"kind": "preempted", "step": s, "t": None} for s in (10, 11, 12, 13)]
    lanes = [label["lane"] for label in chart_data.marker_labels(markers, [1, 1000])]
    assert lanes == [0, 1, 2, 0]


def test_every_line_gets_a_colour_of_its_own() -> None:
    for count in (0, 1, 7, 10, 11, 40):
        palette = chart_data.colors(count)
        assert len(palette) == count and len(set(palette)) == count, count
    assert chart_data.colors(3) == list(BASE_COLORS[:3])
