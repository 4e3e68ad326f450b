"""water_fill: each team's demand-aware entitlement of a flavor (weighted max-min fairness)."""

from __future__ import annotations

import pytest

from vertexplan.fairshare.entitlement import water_fill

WEIGHTS = {"a": 24, "b": 16, "c": 16, "d": 8}


def test_teams_all_asking_more_than_their_part_split_by_guarantee():
    got = water_fill(64, {"a": 100, "b": 40, "c": 30, "d": 20}, WEIGHTS)
    assert got == pytest.approx({"a": 24, "b": 16, "c": 16, "d": 8})


def test_a_team_asking_less_gets_what_it_asks_and_the_rest_goes_by_weight():
    # b asks for 4 of its 16: the 12 it leaves go to a, c, d as 24:16:8.
    got = water_fill(64, {"a": 100, "b": 4, "c": 100, "d": 100}, WEIGHTS)
    assert got["b"] == pytest.approx(4)
    assert got["a"] == pytest.approx(24 + 12 * 24 / 48)
    assert got["c"] == pytest.approx(16 + 12 * 16 / 48)
    assert got["d"] == pytest.approx(8 + 12 * 8 / 48)
    # What one sated team leaves can sate another in turn (d asks 10 < its 12 then).
    got = water_fill(64, {"a": 100, "b": 4, "c": 100, "d": 10}, WEIGHTS)
    assert got == pytest.approx({"a": 30, "b": 4, "c": 20, "d": 10})


def test_a_team_asking_nothing_is_entitled_to_nothing_and_capacity_beyond_demand_is_unowed():
    got = water_fill(32, {"a": 0, "b": 40, "c": 40, "d": 40}, {"a": 8, "b": 8, "c": 8, "d": 8})
    assert got == pytest.approx({"a": 0, "b": 32 / 3, "c": 32 / 3, "d": 32 / 3})
    got = water_fill(64, {"a": 5, "b": 6}, WEIGHTS)
    assert got == {"a": 5, "b": 6}


def test_ceilings_cap_and_teams_without_a_guarantee_share_only_the_leftover():
    got = water_fill(64, {"a": 100, "b": 100}, {"a": 24, "b": 16}, ceilings={"a": 30})
    assert got == pytest.approx({"a": 30, "b": 34})
    got = water_fill(16, {"a": 6, "x": 20, "y": 20}, {"a": 8})
    assert got == pytest.approx({"a": 6, "x": 5, "y": 5})
