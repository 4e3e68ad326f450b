"""Scaling an hourly estimate to a duration or a number of steps, exactly, in integers."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from tests.vertexplan.pricing.factories import job, pool
from vertexplan.pricing.job_estimate import for_duration, for_steps, hourly

# 1_268_778 micro-dollars/h on demand, 672_800 on spot, no flex (see test_hourly).
N1_T4 = hourly(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2)), "us-central1")


def test_whole_hours_are_exact_multiples_of_the_hourly_total():
    for hours in (0, 1, 10, 730, 10_000):
        totals = for_duration(N1_T4, hours)
        assert totals.on_demand == hours * 1_268_778
        assert totals.spot == hours * 672_800
        assert totals.flex is None


@pytest.mark.parametrize("hours", [Decimal("1.5"), "1.5", 1.5])
def test_fractions_of_an_hour_in_any_form(hours):
    assert for_duration(N1_T4, hours).on_demand == 1_903_167  # 1_268_778 x 1.5


def test_one_rounding_half_up_at_the_end():
    # 1_268_778 / 3600 = 352.438 -> 352
    assert for_duration(N1_T4, Decimal(1) / 3600).on_demand == 352
    # 1_268_778 x 0.0005 = 634.389 -> 634
    assert for_duration(N1_T4, Decimal("0.0005")).on_demand == 634
    # 672_800 x 0.00075 = 504.6 -> 505
    assert for_duration(N1_T4, "0.00075").spot == 505
    # 1_268_778 x 0.25 = 317_194.5: an exact half rounds up
    assert for_duration(N1_T4, "0.25").on_demand == 317_195
    # A float is read as the decimal it prints as, not as its binary expansion.
    assert for_duration(N1_T4, 0.1).on_demand == for_duration(N1_T4, "0.1").on_demand == 126_878


def test_steps_times_step_time():
    # 1000 steps x 0.5 s = 500 s: 1_268_778 x 500 / 3600 = 176_219.17 -> 176_219
    assert for_steps(N1_T4, 1000, 0.5).on_demand == 176_219
    assert for_steps(N1_T4, 1000, "0.5") == for_duration(N1_T4, Decimal(500) / 3600)
    assert for_steps(N1_T4, 7200, timedelta(milliseconds=500)).on_demand == 1_268_778
    assert for_steps(N1_T4, 0, 3).spot == 0


@pytest.mark.parametrize("bad", [-1, "-0.5", "an hour", float("nan")])
def test_a_duration_must_be_a_non_negative_number(bad):
    with pytest.raises(ValueError):
        for_duration(N1_T4, bad)


def test_steps_must_be_a_whole_number():
    with pytest.raises(ValueError):
        for_steps(N1_T4, 1.5, 1)  # type: ignore[arg-type]
