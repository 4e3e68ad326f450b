"""Micro-dollar arithmetic: Decimal in, integers out, one half-up rounding."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from vertexplan.pricing import format_usd, micros_to_usd, usd_to_micros
from vertexplan.pricing.money import cost_of_seconds, round_half_up, to_decimal


def test_half_up():
    assert round_half_up(Fraction(5, 2)) == 3
    assert round_half_up(Fraction(7, 2)) == 4  # not banker's rounding
    assert round_half_up(Fraction(249, 100)) == 2
    with pytest.raises(ValueError):
        round_half_up(Fraction(-1, 2))


def test_dollars_and_micro_dollars():
    assert usd_to_micros(Decimal("0.4369977")) == 436_998
    assert usd_to_micros(Decimal("0.0000005")) == 1
    assert usd_to_micros(Fraction(Decimal("0.046")) * 100 / 730) == 6_301  # 6_301.37
    assert micros_to_usd(1_268_778) == Decimal("1.268778")


def test_to_decimal_never_keeps_a_binary_float_expansion():
    assert to_decimal(0.1) == Decimal("0.1")
    assert to_decimal("2.50") == Decimal("2.50")
    with pytest.raises(TypeError):
        to_decimal(True)
    with pytest.raises(ValueError):
        to_decimal("inf")


def test_cost_of_seconds():
    assert cost_of_seconds(3_600_000, 1) == 1_000
    assert cost_of_seconds(3_600_000, Decimal("0.0005")) == 1  # 0.5 -> 1


@pytest.mark.parametrize("rate", [None, -1, 1.5, True])
def test_the_rate_must_be_whole_non_negative_micro_dollars(rate):
    with pytest.raises((TypeError, ValueError)):
        cost_of_seconds(rate, 60)  # type: ignore[arg-type]


def test_format_usd():
    assert format_usd(136_648_131) == "$136.65"
    assert format_usd(1_234_567_890_000) == "$1,234,567.89"
    assert format_usd(4_999) == "$0.00"
    assert format_usd(5_000) == "$0.01"
    assert format_usd(1_268_778, places=4) == "$1.2688"


def test_format_usd_keeps_the_sign_of_an_overspent_budget():
    assert format_usd(-3_200_000) == "-$3.20"
    assert format_usd(0) == "$0.00"


def test_display_usd_shows_what_matters_below_a_dollar():
    from vertexplan.pricing import display_usd

    assert display_usd(1_400) == "$0.0014"
    assert display_usd(5_000) == "$0.005"
    assert display_usd(1) == "$0.000001"
    assert display_usd(123_456) == "$0.12"
    assert display_usd(0) == "$0.00"
    assert display_usd(-1_400) == "-$0.0014"
    assert display_usd(1_268_778) == "$1.27"
    assert display_usd(10**18) == "$1,000,000,000,000.00"
    assert display_usd(1_268_778, 3) == "$1.269"


def test_the_usd_filter_never_raises():
    from controlplane.costs.templatetags.costs_ui import usd, usd_over

    for value in (-1, 0, 10**30, "12", "abc", None, "", 1.5, float("nan"), [], True):
        assert isinstance(usd(value), str)
    assert usd(None) == "\N{EN DASH}" and usd("abc") == "\N{EN DASH}"
    assert usd(-5_000_000) == "-$5.00"
    assert usd_over(-2_500_000) == "over by $2.50" and usd_over(2_500_000) == "$2.50"
