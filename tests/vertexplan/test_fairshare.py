"""decide(): the admission in front of Vertex, as pure state transitions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vertexplan.fairshare import Flavor, Job, State, TeamQuota, TooBig, check_fits_project, decide

A100 = Flavor("NVIDIA_TESLA_A100", "us-central1")
A100_SPOT = Flavor("NVIDIA_TESLA_A100", "us-central1", spot=True)
TWO_TEAMS = {"a": {A100: TeamQuota(8, 8)}, "b": {A100: TeamQuota(8, 8)}}


def job(id: str, team: str, n: int, **kw) -> Job:
    return Job(id=id, team=team, demand={A100: n}, **kw)


def state(running=(), waiting=(), now=100.0, **kw) -> State:
    return State(now=now, quotas=kw.pop("quotas", TWO_TEAMS),
                 project_quota=kw.pop("project_quota", {A100: 16}),
                 running=list(running), waiting=list(waiting), **kw)


def held(running) -> int:
    return sum(j.demand.get(A100, 0) for j in running)


def test_the_issue_scenario_borrow_preempt_at_checkpoint_and_resume():
    a = job("a1", "a", 16, submitted_at=0)
    # A alone borrows B's unused 8.
    d = decide(state(waiting=[a], now=1))
    assert d.admit == ["a1"]
    running = [replace(a, started_at=1)]

    # B's high-priority 8 is within B's guarantee: A's job is asked to stop at a checkpoint.
    b = job("b1", "b", 8, priority="high", submitted_at=10)
    d = decide(state(running, [b], now=10))
    assert d.admit == []
    assert [(p.job_id, p.for_job_id, p.lost_accelerator_s) for p in d.preempt] == [("a1", "b1", 0)]
    assert "a1" in d.reason("b1") and "checkpoint" in d.reason("b1")

    # While A checkpoints, nothing more is asked and nothing starts over the quota.
    running = [replace(running[0], stopping=True)]
    d = decide(state(running, [b], now=20))
    assert (d.admit, d.preempt) == ([], [])
    assert "returned" in d.reason("b1")

    # A stopped and is requeued (its first submission kept): B starts, A waits.
    requeued = replace(a, started_at=None, stopping=False)
    d = decide(state([], [requeued, b], now=30))
    assert d.admit == ["b1"]
    assert [w.job_id for w in d.waiting] == ["a1"]
    assert "8 of 16" in d.reason("a1")
    running = [replace(b, started_at=30)]

    # B finishes: A resumes.
    d = decide(state([], [requeued], now=40))
    assert d.admit == ["a1"]


def test_never_over_the_project_quota_or_a_team_ceiling():
    waiting = [job(f"j{i}", "ab"[i % 2], n, submitted_at=i)
               for i, n in enumerate([8, 4, 8, 4, 2, 8, 1])]
    d = decide(state(waiting=waiting))
    admitted = [j for j in waiting if j.id in d.admit]
    assert held(admitted) <= 16
    for team in "ab":
        assert held([j for j in admitted if j.team == team]) <= 16
    # Every job left waiting is too big for what is left: none was held back for nothing.
    free = 16 - held(admitted)
    assert all(j.total() > free for j in waiting if j.id not in d.admit)
    assert held(admitted) == 16


def test_a_team_over_its_ceiling_waits_with_the_figures():
    quotas = {"a": {A100: TeamQuota(4, 2)}, "b": {A100: TeamQuota(8, 8)}}
    d = decide(state(waiting=[job("a1", "a", 4), job("a2", "a", 4, submitted_at=1)],
                     quotas=quotas))
    assert d.admit == ["a1"]
    assert "team a would hold 8" in d.reason("a2") and "guarantee 4 + borrowing limit 2" in \
        d.reason("a2")


def test_priority_first_then_fair_share_then_age():
    waiting = [job("a-old", "a", 8, submitted_at=0), job("b-new", "b", 8, submitted_at=5),
               job("a-high", "a", 8, priority="high", submitted_at=9)]
    # A used more than B over the window: B goes before A at the same priority.
    usage = {"a": {A100: 8 * 3600.0}, "b": {A100: 0.0}}
    d = decide(state(waiting=waiting, usage=usage, window_s=3600.0))
    assert d.admit == ["a-high", "b-new"]
    assert [(w.job_id, w.place) for w in d.waiting] == [("a-old", 1)]


def test_the_weight_of_what_a_team_holds_now_against_what_it_used():
    """State.held_now_weight: team a used nothing over the window but holds 12 now, team b
    used 2 on average and holds 4. Weighed alike, b's share is lower (1.5 against 3.0 of
    its guarantee); with what is held now weighed 0.2, a's is (0.6 against 0.7)."""
    quotas = {t: {A100: TeamQuota(4, 20)} for t in ("a", "b")}
    running = [job("a-run", "a", 12, started_at=0), job("b-run", "b", 4, started_at=0)]
    waiting = [job("a-next", "a", 8, submitted_at=1), job("b-next", "b", 8, submitted_at=2)]
    usage = {"a": {A100: 0.0}, "b": {A100: 2 * 3600.0}}
    common = dict(quotas=quotas, project_quota={A100: 24}, usage=usage, window_s=3600.0,
                  fair_preemption=False)
    assert decide(state(running, waiting, **common)).admit == ["b-next"]
    assert decide(state(running, waiting, held_now_weight=0.2, **common)).admit == ["a-next"]


def test_never_admits_past_a_higher_priority_job_that_fits():
    waiting = [job("low", "b", 8, priority="low", submitted_at=0),
               job("high", "a", 8, priority="high", submitted_at=50)]
    d = decide(state(waiting=waiting, project_quota={A100: 8}))
    assert d.admit == ["high"]
    assert d.waiting[0].job_id == "low"


def test_a_guarantee_comes_before_a_higher_priority_borrower():
    # As Kueue orders its heads: a job within its team's guarantee before one that borrows,
    # else the borrower would start only to be stopped for the guarantee at once.
    waiting = [job("borrow-high", "a", 8, priority="high", submitted_at=0),
               job("mine-low", "b", 8, priority="low", submitted_at=50)]
    d = decide(state([job("r", "a", 8, started_at=0)], waiting))
    assert d.admit == ["mine-low"]


def test_a_big_job_lets_small_ones_pass_until_it_has_waited_long_enough():
    running = [job("r", "b", 12, started_at=0)]
    # Both borrow (over their team's guarantee of 8), so neither takes anything back.
    waiting = [job("big", "a", 10, submitted_at=0), job("small", "b", 2, submitted_at=1)]
    d = decide(state(running, waiting, now=60, reserve_after_s=3600))
    assert d.admit == ["small"]
    d = decide(state(running, waiting, now=4000, reserve_after_s=3600))
    assert d.admit == []
    assert "held for job big" in d.reason("small")


def test_no_preemption_for_a_borrowing_job_nor_of_a_job_without_checkpoints():
    running = [job("a1", "a", 16, started_at=0)]
    # B's job of 12 is over B's guarantee of 8: it borrows, so it takes nothing back.
    d = decide(state(running, [job("b1", "b", 12)]))
    assert d.preempt == []
    # A job without checkpoints is kept unless its team's policy allows losing work ...
    running = [job("a1", "a", 16, started_at=0, checkpointing=False)]
    d = decide(state(running, [job("b1", "b", 8)], now=3600))
    assert d.preempt == []
    # ... and then the loss is shown: an hour of 16 accelerators.
    running = [replace(running[0], may_lose_work=True)]
    d = decide(state(running, [job("b1", "b", 8)], now=3600))
    assert [(p.job_id, p.lost_accelerator_s) for p in d.preempt] == [("a1", 16 * 3600.0)]


def test_the_lowest_priority_borrower_stops_first_and_only_as_many_as_needed():
    quotas = {"a": {A100: TeamQuota(4, 12)}, "b": {A100: TeamQuota(4, 12)},
              "c": {A100: TeamQuota(8, 8)}}
    running = [job("a-high", "a", 6, priority="high", started_at=0),
               job("b-low", "b", 6, priority="low", started_at=0),
               job("b-norm", "b", 4, started_at=5)]
    d = decide(state(running, [job("c1", "c", 6)], quotas=quotas))
    assert [p.job_id for p in d.preempt] == ["b-low"]


def test_spot_and_on_demand_are_counted_apart():
    quotas = {"a": {A100: TeamQuota(8, 0), A100_SPOT: TeamQuota(8, 0)}}
    running = [job("od", "a", 8, started_at=0)]
    spot = Job("s1", "a", {A100_SPOT: 8})
    d = decide(state(running, [spot, job("od2", "a", 1)], quotas=quotas,
                     project_quota={A100: 8, A100_SPOT: 8}))
    assert d.admit == ["s1"]


def test_a_job_bigger_than_the_project_quota_is_refused_with_the_figures():
    with pytest.raises(TooBig, match=r"needs 24 NVIDIA_TESLA_A100 in us-central1 \(on-demand\) "
                                     r"at once but 16 is the project's whole Vertex quota"):
        check_fits_project({A100: 24}, {A100: 16})
    d = decide(state(waiting=[job("huge", "a", 24)]))
    assert [r.job_id for r in d.refused] == ["huge"] and d.waiting == []


def test_a_job_that_waited_long_enough_goes_first_and_stops_a_borrower_of_no_higher_priority():
    quotas = {"a": {A100: TeamQuota(4, 12)}, "b": {A100: TeamQuota(4, 12)},
              "c": {A100: TeamQuota(8, 8)}}
    running = [job("b-high", "b", 8, priority="high", started_at=0),
               job("b-low", "b", 8, priority="low", started_at=0)]
    # a's job of 8 borrows (a's guarantee is 4) and b is far above its share: after four hours
    # a's job comes before c's fresh job and b's low-priority job is asked to stop for it.
    waiting = [job("a-old", "a", 8, submitted_at=0), job("c-new", "c", 8, submitted_at=14000)]
    d = decide(state(running, waiting, now=14400, quotas=quotas, reserve_after_s=4 * 3600,
                     fair_preemption=False))
    assert [(p.job_id, p.for_job_id) for p in d.preempt] == [("b-low", "a-old")]
    assert d.waiting[0].job_id == "a-old" and "waited longest" in d.waiting[0].reason
    assert "held for job a-old" in d.reason("c-new")


def test_a_held_flavor_lets_through_jobs_that_end_before_the_held_job_could_start():
    # 12 of 16 held until t=10000 (the time limit of a running job that cannot be stopped);
    # the big job has waited long enough to hold A100 for its 14, leaving 2 beside it then: a
    # job whose limit ends before t=10000 still starts, one of 4 whose limit runs past it
    # does not (with backfill_until_checkpoint off: on, it could start and be stopped at a
    # checkpoint later, tests/vertexplan/test_fairshare_holds.py).
    running = [job("r", "b", 12, started_at=0, limit_s=10000, checkpointing=False)]
    waiting = [job("big", "a", 14, submitted_at=0),
               job("short", "b", 2, submitted_at=5000, limit_s=3000),
               job("long", "c", 4, submitted_at=5000, limit_s=9000)]
    d = decide(state(running, waiting, now=6000, reserve_after_s=3600, fair_preemption=False,
                     backfill_until_checkpoint=False,
                     quotas={"a": {A100: TeamQuota(4, 12)}, "b": {A100: TeamQuota(4, 12)},
                             "c": {A100: TeamQuota(8, 8)}}))
    assert d.admit == ["short"]
    assert "can start within 1.1 h" in d.reason("long")


def test_each_waiting_job_gets_its_earliest_start_by_the_running_jobs_limits():
    running = [job("r1", "b", 8, started_at=0, limit_s=3600),
               job("r2", "a", 8, started_at=0, limit_s=7200)]
    waiting = [job("w8", "a", 8, submitted_at=10), job("w16", "b", 16, submitted_at=20)]
    d = decide(state(running, waiting, now=100))
    assert {w.job_id: w.earliest_start for w in d.waiting} == {"w8": 3600, "w16": 7200}
    # Without a running job's limit there is no estimate.
    d = decide(state([replace(running[0], limit_s=None)], waiting[1:], now=100))
    assert d.waiting[0].earliest_start is None
