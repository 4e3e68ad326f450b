"""Choosing a serving runtime by measurement: the cheapest runtime that meets the p99 target,
its cost per million tokens in micro-dollars, and the traffic a trial refuses (naming the
field and its limit)."""

from __future__ import annotations

import pytest

from vertexplan.runtime_choice import (
    Measured,
    Traffic,
    TrafficError,
    choose,
    cost_per_million_tokens,
)

HOURLY = 190_000  # n1-standard-4, $0.19 an hour, in micro-dollars

ROWS = [
    Measured("eager", tokens_per_s=1000.0, p50_ms=20.0, p99_ms=80.0, requests=16),
    Measured("compiled", tokens_per_s=1500.0, p50_ms=15.0, p99_ms=300.0, requests=16),
    Measured("aot", tokens_per_s=1200.0, p50_ms=18.0, p99_ms=90.0, requests=16),
    Measured("triton", tokens_per_s=400.0, p50_ms=60.0, p99_ms=110.0, requests=16),
    Measured("vllm", note="needs a GPU"),
]


def test_the_cheapest_runtime_that_meets_the_target_is_chosen_not_the_fastest() -> None:
    # compiled is fastest (cheapest per token) but misses a 100 ms p99; aot is the cheapest
    # of eager and aot, which meet it; triton misses it too.
    choice = choose(ROWS, 100, HOURLY)
    assert choice.runtime == "aot"
    assert "cheapest of 2 that did" in choice.reason
    # With a looser target the fastest one meets it and is cheapest.
    assert choose(ROWS, 300, HOURLY).runtime == "compiled"


def test_cost_per_million_tokens_is_the_hourly_price_over_an_hours_tokens() -> None:
    # 1000 tokens/s = 3.6 M tokens an hour: $0.19 / 3.6 = $0.052778 per million.
    assert cost_per_million_tokens(HOURLY, 1000.0) == 52_778
    costs = choose(ROWS, 100, HOURLY).costs
    assert costs == {"eager": 52_778, "compiled": 35_185, "aot": 43_981, "triton": 131_944,
                     "vllm": None}
    # The chosen runtime is the cheapest of those that met the target, by these very figures.
    meeting = [r.runtime for r in ROWS if r.measured and r.p99_ms <= 100]
    assert min(meeting, key=lambda name: costs[name]) == "aot"
    with pytest.raises(ValueError):
        cost_per_million_tokens(HOURLY, 0.0)


def test_no_runtime_is_chosen_when_none_meets_the_target_and_the_reason_says_so() -> None:
    choice = choose(ROWS, 50, HOURLY)
    assert choice.runtime is None
    assert choice.reason == ("no runtime met the p99 target of 50 ms: the lowest p99 was "
                             "eager's, 80.0 ms")
    assert choose([Measured("vllm", note="needs a GPU")], 50, HOURLY).runtime is None


def test_without_a_price_the_fastest_runtime_meeting_the_target_wins_and_costs_are_unknown(
        ) -> None:
    choice = choose(ROWS, 100, None)
    assert choice.runtime == "aot" and set(choice.costs.values()) == {None}


def test_ties_go_to_the_lower_p99_then_the_tables_order() -> None:
    rows = [Measured("compiled", 1000.0, 10.0, 50.0), Measured("eager", 1000.0, 10.0, 50.0),
            Measured("aot", 1000.0, 10.0, 40.0)]
    assert choose(rows, 100, HOURLY).runtime == "aot"
    assert choose(rows[:2], 100, HOURLY).runtime == "eager"


def test_a_row_read_back_from_the_trials_json_keeps_its_figures_or_its_note() -> None:
    row = Measured.from_dict({"runtime": "eager", "tokens_per_s": 12.5, "p50_ms": 3,
                              "p99_ms": 9.5, "requests": 4, "note": ""})
    assert (row.measured, row.tokens_per_s, row.p50_ms, row.requests) == (True, 12.5, 3.0, 4)
    skipped = Measured.from_dict({"runtime": "vllm", "tokens_per_s": None, "note": "needs a GPU"})
    assert (skipped.measured, skipped.note) == (False, "needs a GPU")


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"prompt_tokens": 0}, "prompt_tokens", "from 1 to 192"),
    ({"output_tokens": 65}, "output_tokens", "from 1 to 64"),
    ({"concurrency": 33}, "concurrency", "from 1 to 32"),
    ({"p99_target_ms": True}, "p99_target_ms", "whole number"),
    ({"requests": 257}, "requests", "from 1 to 256"),
    ({"concurrency": 8, "requests": 4}, "requests", "at least concurrency (8)"),
])
def test_traffic_a_trial_cannot_run_names_the_field_and_the_limit(
        changes: dict, field: str, words: str) -> None:
    values = {"prompt_tokens": 32, "output_tokens": 16, "concurrency": 4, "requests": 16,
              "p99_target_ms": 500, **changes}
    with pytest.raises(TrafficError) as refused:
        Traffic(**values)
    assert refused.value.field == field and words in str(refused.value)
