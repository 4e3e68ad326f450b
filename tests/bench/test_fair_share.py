"""bench.fair_share on a small seeded run: the simulation holds the project's quota, is
reproducible, and prints the figures in the line the issue asks for."""

from __future__ import annotations

import re

import pytest

from bench import fair_share


def test_a_small_seeded_run_keeps_the_quota_and_prints_the_last_line(capsys):
    lists = fair_share.record(7, {"a": 3, "b": 3, "c": 4, "d": 3}, days=0.5)
    first = fair_share.simulate(lists, 0.5)
    again = fair_share.simulate(lists, 0.5)
    assert first.over_quota == 0
    assert first.started > 50 and first.waits_s == again.waits_s
    figures = fair_share.figures(first)
    assert 0 < figures.utilisation <= 1
    assert fair_share.main(["--days", "0.25", "--users", "2,2,3,2", "--seed", "3"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"max share deviation \d+\.\d%, utilisation while waiting \d+\.\d%, "
                        r"longest wait \d+\.\d h", last)


def test_bad_users_are_refused_with_what_is_valid():
    with pytest.raises(SystemExit, match=r"4 positive counts, one per team \(a, b, c, d\)"):
        fair_share.parse_users("1,2")


def test_the_contention_workload_binds_each_user_to_one_flavor_and_entitlement_follows_demand():
    users = {"a": 3, "b": 3, "c": 4, "d": 3}
    lists = fair_share.record(7, users, days=0.25, workload="contention", jobs_per_user=2)
    flavors = {user: {job.flavor for job in jobs} for user, jobs in lists.items()}
    assert all(len(bound) == 1 for bound in flavors.values())
    for team in users:  # every team asks for both flavors
        assert set().union(*(f for (t, _), f in flavors.items() if t == team)) == set(
            fair_share.PROJECT)
    out = fair_share.simulate(lists, 0.25, jobs_per_user=2)
    figures = fair_share.figures(out)
    for flavor in fair_share.PROJECT:
        assert sum(figures.entitled[t][flavor] for t in users) == pytest.approx(1)
        # Entitled to no more than the flavor's capacity at any moment, in all.
        owed = sum(out.entitled_s[t][flavor] for t in users)
        assert owed <= fair_share.PROJECT[flavor] * out.span_s + 1e-6
    assert out.span_s == pytest.approx(0.25 * 24 * 3600)
    assert figures.static_deviation >= 0 and figures.deviation >= 0


def test_each_rule_can_be_left_out_to_see_what_it_costs(capsys):
    assert fair_share.main(["--days", "0.25", "--users", "2,2,3,2", "--seed", "3",
                            "--without", "both", "--held-now-weight", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "no bound: the starvation rule is off" in out
    lists = fair_share.record(3, {"a": 2, "b": 2, "c": 3, "d": 2}, days=0.25)
    assert any(job.priority == "high" for jobs in lists.values() for job in jobs)
    normal = fair_share.all_normal(lists)
    assert {job.priority for jobs in normal.values() for job in jobs} == {"normal"}
    assert [len(jobs) for jobs in normal.values()] == [len(jobs) for jobs in lists.values()]
