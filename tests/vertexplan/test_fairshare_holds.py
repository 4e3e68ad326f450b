"""decide(): how a job that has waited too long holds what it needs (the bound on waiting)."""

from __future__ import annotations

from vertexplan.fairshare import Flavor, Job, State, TeamQuota, decide

A100 = Flavor("NVIDIA_TESLA_A100", "us-central1")
HOUR = 3600.0
# a and b borrow beyond small guarantees; c's guarantee is the rest.
QUOTAS = {"a": {A100: TeamQuota(4, 12)}, "b": {A100: TeamQuota(4, 12)},
          "c": {A100: TeamQuota(8, 8)}}


def job(id: str, team: str, n: int, **kw) -> Job:
    return Job(id=id, team=team, demand={A100: n}, **kw)


def state(running, waiting, now, **kw) -> State:
    return State(now=now, quotas=kw.pop("quotas", QUOTAS), project_quota={A100: 16},
                 running=list(running), waiting=list(waiting), **kw)


def test_a_job_holds_its_flavor_after_six_hours_of_waiting_by_default():
    running = [job("r", "b", 12, started_at=0)]
    waiting = [job("big", "a", 10, submitted_at=0), job("small", "b", 2, submitted_at=1)]
    assert decide(state(running, waiting, now=6 * HOUR - 1)).admit == ["small"]
    d = decide(state(running, waiting, now=6 * HOUR))
    assert d.admit == []
    assert "held for job big" in d.reason("small")


def test_a_requeued_job_has_waited_since_it_was_stopped_not_since_it_was_submitted():
    # Stopped at a checkpoint for another team an hour ago, first submitted long before: it
    # does not come back starving (and stop others in turn); its age still orders it.
    running = [job("r", "b", 12, started_at=0)]
    big = job("big", "a", 10, submitted_at=0, queued_at=20 * HOUR)
    waiting = [big, job("small", "b", 2, submitted_at=1)]
    d = decide(state(running, waiting, now=21 * HOUR, reserve_after_s=4 * HOUR))
    assert d.admit == ["small"]
    assert "held" not in d.reason("big")
    assert big.waiting_since() == 20 * HOUR
    assert job("fresh", "a", 1, submitted_at=5.0).waiting_since() == 5.0


def test_accelerators_of_a_job_stopping_at_a_checkpoint_count_as_returning_for_a_hold():
    # 10 of 16 in use: 6 by a job that cannot be stopped (its limit ends at t=10000) and 4 by
    # one already asked to stop (its limit, t=50000, does not keep it). The starving job of 12
    # can start at t=10000 with 4 left beside it, so c's job of 4 starts now whatever its
    # limit; counted by the stopping job's limit there would be nothing beside it.
    running = [job("r", "b", 6, started_at=0, limit_s=10000, checkpointing=False),
               job("s", "c", 4, started_at=0, limit_s=50000, stopping=True)]
    waiting = [job("big", "a", 12, submitted_at=0),
               job("beside", "c", 4, submitted_at=5000, limit_s=40000)]
    d = decide(state(running, waiting, now=6000, reserve_after_s=HOUR))
    assert d.admit == ["beside"]
    assert "held for it" in d.reason("big")


def test_a_starving_job_without_checkpoints_holds_its_teams_room():
    # A job without checkpoints runs only within its team's guarantee (8): a's own job of 4
    # keeps it out. Until it starves a's next job takes the room as it frees; then a's next
    # jobs wait behind it, and other teams' jobs are not held by it.
    quotas = {"a": {A100: TeamQuota(8, 8)}, "b": {A100: TeamQuota(8, 8)}}
    running = [job("a1", "a", 4, started_at=0)]
    waiting = [job("nock", "a", 8, submitted_at=0, checkpointing=False),
               job("a-next", "a", 2, submitted_at=100), job("b-next", "b", 2, submitted_at=100)]
    d = decide(state(running, waiting, now=1000, quotas=quotas, reserve_after_s=HOUR))
    assert sorted(d.admit) == ["a-next", "b-next"]
    d = decide(state(running, waiting, now=2 * HOUR, quotas=quotas, reserve_after_s=HOUR))
    assert d.admit == ["b-next"]
    assert "team a's room" in d.reason("a-next") and "held for its job nock" in d.reason("a-next")
    assert "room is now held for it" in d.reason("nock")
    # With holding off, nothing is kept for it.
    d = decide(state(running, waiting, now=2 * HOUR, quotas=quotas, reserve_after_s=HOUR,
                     hold_when_starving=False))
    assert sorted(d.admit) == ["a-next", "b-next"]


def test_a_starving_job_goes_first_in_its_own_team_whatever_the_priority():
    # Within a team, a high-priority job would come first; one that has waited past the
    # limit comes before it.
    running = [job("r", "b", 12, started_at=0)]
    waiting = [job("old-low", "a", 4, priority="low", submitted_at=0),
               job("new-high", "a", 4, priority="high", submitted_at=3 * HOUR)]
    d = decide(state(running, waiting, now=3 * HOUR + 1, reserve_after_s=2 * HOUR))
    assert d.admit == ["old-low"]


def test_a_job_that_stops_at_a_checkpoint_starts_on_a_hold_and_is_stopped_for_the_held_job():
    # b's 12 cannot be stopped and run until t=10000; a's 14 has starved since t=3600 and
    # holds A100. c's job of 4 runs past t=10000 but can stop at a checkpoint: it starts on
    # the idle 4 (high priority or not); c's job without checkpoints does not.
    nonstop = job("r", "b", 12, started_at=0, limit_s=10000, checkpointing=False)
    big = job("big", "a", 14, submitted_at=0)
    loan = job("loan", "c", 4, submitted_at=5000, limit_s=9000, priority="high")
    kept = job("kept", "c", 4, submitted_at=5000, limit_s=9000, checkpointing=False)
    d = decide(state([nonstop], [big, loan, kept], now=6000, reserve_after_s=HOUR))
    assert d.admit == ["loan"]
    assert "held for job big" in d.reason("kept")
    on_loan = [nonstop, job("loan", "c", 4, started_at=6000, limit_s=9000, priority="high")]
    # Stopping it alone would not free 14: it keeps running.
    d = decide(state(on_loan, [big, kept], now=8000, reserve_after_s=HOUR))
    assert (d.admit, d.preempt) == ([], [])
    # b's job ended: 12 free and 4 on loan make the 14. The loan is asked to stop at its
    # checkpoint for big, and nothing else starts meanwhile.
    d = decide(state(on_loan[1:], [big, kept], now=10000, reserve_after_s=HOUR))
    assert d.admit == []
    assert [(p.job_id, p.for_job_id, p.lost_accelerator_s) for p in d.preempt] == [
        ("loan", "big", 0.0)]
    assert "held for job big" in d.reason("kept")


def test_a_job_started_before_the_hold_is_not_stopped_as_a_loan():
    # c's job of 4 started before big began to starve, within c's guarantee: not on loan, so
    # big waits for it (and b's) to end, as before.
    running = [job("c1", "c", 4, started_at=100, limit_s=20000)]
    d = decide(state(running, [job("big", "a", 14, submitted_at=0)], now=10000,
                     reserve_after_s=HOUR))
    assert (d.admit, d.preempt) == ([], [])
    assert "its accelerators are now held for it" in d.reason("big")


def test_with_starving_orders_teams_off_a_starving_job_waits_its_teams_turn():
    # a's job of 8 borrows (a's guarantee is 4) and has starved; c's fresh job is within c's
    # guarantee. Off, c's goes first (it takes b's borrowed low-priority 8 back, A100 held
    # for it meanwhile) and a's waits behind it; on (the default), a's goes first.
    running = [job("b-high", "b", 8, priority="high", started_at=0),
               job("b-low", "b", 8, priority="low", started_at=0)]
    waiting = [job("a-old", "a", 8, submitted_at=0), job("c-new", "c", 8, submitted_at=14000)]
    kw = {"reserve_after_s": 4 * HOUR, "fair_preemption": False}
    d = decide(state(running, waiting, now=14400, starving_orders_teams=False, **kw))
    assert [(p.job_id, p.for_job_id) for p in d.preempt] == [("b-low", "c-new")]
    assert [w.job_id for w in d.waiting] == ["c-new", "a-old"]
    assert "held for job c-new" in d.reason("a-old")
    d = decide(state(running, waiting, now=14400, **kw))
    assert [(p.job_id, p.for_job_id) for p in d.preempt] == [("b-low", "a-old")]
