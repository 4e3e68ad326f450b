"""bench.hang_detection: every injected hang is flagged within the issue's bound (max(k x p95,
floor) + one sweep and one follow interval), no steady stretch is flagged, and the last line
says it beside the NCCL watchdog."""

from __future__ import annotations

import random
import re

from bench import hang_detection
from vertexplan.health import HangPolicy


def test_each_hang_is_flagged_within_the_bound_and_nothing_steady_is() -> None:
    rng = random.Random(5)
    for policy in (HangPolicy(), HangPolicy(k=10, floor_s=60)):
        trials = [hang_detection.run_trial(rng, policy) for _ in range(10)]
        assert all(policy.floor_s <= t.delay_s <= t.bound_s for t in trials), trials
        assert sum(t.false_alarms for t in trials) == 0


def test_the_last_line_compares_with_the_watchdog(capsys) -> None:
    assert hang_detection.main(["--trials", "5", "--seed", "2"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"median \d+ s, p95 \d+ s: \d+\.\d x sooner than the NCCL watchdog "
                        r"\(1800 s\), within the bound in 5 of 5", last), last
