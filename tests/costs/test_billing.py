"""Actual cost: only billed running time counts; lost work is shown apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from vertexplan.pricing.job_estimate import (
    Interval,
    Phase,
    actual_cost,
    billed_cost,
    billed_time,
    lost_compute,
)

RATE = 33_822_739  # a2-highgpu-8g + 100 GB pd-ssd in us-central1, micro-dollars per hour
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_queued_and_preempted_time_is_not_billed():
    life = [
        Interval(at(0), at(45), Phase.QUEUED),
        Interval(at(45), at(105), Phase.RUNNING),  # 60 min, then preempted
        Interval(at(105), at(140), Phase.PREEMPTED),
        Interval(at(140), at(170), Phase.RUNNING),  # 30 min, succeeded
    ]
    assert billed_time(life) == timedelta(minutes=90)
    # 1.5 h x 33_822_739 = 50_734_108.5: the half rounds up.
    assert billed_cost(life, RATE) == 50_734_109
    assert billed_cost(life, RATE) == billed_cost(
        [i for i in life if i.phase == Phase.RUNNING], RATE
    )


def test_an_attempt_that_failed_through_no_fault_of_the_user_is_not_billed():
    life = [
        Interval(at(0), at(20), Phase.RUNNING, system_failure=True),
        Interval(at(20), at(80), Phase.RUNNING),
    ]
    assert billed_cost(life, RATE) == RATE


def test_per_second_arithmetic_is_exact_with_one_half_up_rounding():
    # 33_822_739 x 1 s / 3600 = 9_395.205... -> 9_395
    one_second = [Interval(T0, T0 + timedelta(seconds=1))]
    assert billed_cost(one_second, RATE) == 9_395
    # 3_601 s: 33_822_739 x 3_601 / 3600 = 33_832_134.2... -> 33_832_134 (not 3_601 x 9_395)
    odd = [Interval(T0, T0 + timedelta(seconds=3_601))]
    assert billed_cost(odd, RATE) == 33_832_134
    # Exactly half a micro-dollar rounds up: 1_800 micro-dollars/h for 1 s = 0.5.
    assert billed_cost(one_second, 1_800) == 1
    assert billed_cost(one_second, 1_799) == 0
    # Sub-second time counts to the microsecond.
    half = [Interval(T0, T0 + timedelta(milliseconds=500))]
    assert billed_cost(half, 7_200) == 1


def test_the_same_stretch_reported_twice_is_billed_once():
    life = [Interval(at(0), at(60)), Interval(at(30), at(90)), Interval(at(90), at(120))]
    assert billed_time(life) == timedelta(minutes=120)


def test_no_intervals_cost_nothing():
    assert billed_cost([], RATE) == 0


def test_lost_compute_is_the_time_since_the_last_checkpoint():
    # 20 minutes of an a2-highgpu-8g since the last checkpoint: a third of the hourly rate.
    assert lost_compute(RATE, 1200) == 11_274_246  # 11_274_246.33
    assert lost_compute(RATE, timedelta(minutes=20)) == lost_compute(RATE, "1200")
    assert lost_compute(RATE, 0) == 0


def test_actual_cost_shows_lost_work_apart_from_useful_work():
    life = [
        Interval(at(0), at(60), Phase.RUNNING),
        Interval(at(60), at(75), Phase.PREEMPTED),
        Interval(at(75), at(135), Phase.RUNNING),
    ]
    cost = actual_cost(life, RATE, lost_seconds=[1200])
    assert cost.billed == 2 * RATE
    assert cost.lost == lost_compute(RATE, 1200)
    assert cost.useful == cost.billed - cost.lost


@pytest.mark.parametrize("rate", [None, -1, 1.5, True])
def test_the_rate_must_be_whole_non_negative_micro_dollars(rate):
    with pytest.raises((TypeError, ValueError)):
        billed_cost([Interval(T0, at(1))], rate)  # type: ignore[arg-type]


def test_an_interval_cannot_end_before_it_starts():
    with pytest.raises(ValueError):
        Interval(at(10), at(0))
