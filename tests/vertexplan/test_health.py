"""Hang and straggler decisions over simulated timelines: a steady job, one that turns 3x
slower, a long evaluation, a hang (flagged within k x p95 + one check interval), a slow rank
named within 50 steps, and an even run where nobody is named."""

from __future__ import annotations

import random

import pytest

from vertexplan.health import (
    HangPolicy,
    StartupShape,
    StragglerPolicy,
    expected_interval,
    hang_verdict,
    percentile,
    startup_allowance_s,
    startup_shape,
    straggler_verdict,
)

POLICY = HangPolicy(k=10, floor_s=10, startup_s=20, quiet_phase_cap_s=3600)
CHECK_EVERY_S = 5.0  # the simulated follow/reconcile interval


def flagged_at(steps: list[float], *, start: float, until: float,
               quiet: tuple[str, float] | None = None, activity: list[float] | None = None,
               policy: HangPolicy = POLICY) -> float | None:
    """The first check time at which the job is suspected to hang, seeing only what was
    printed by then."""
    now = start
    while now <= until:
        seen = [t for t in steps if t <= now]
        done = [t for t in activity or [] if t <= now]
        phase = quiet if quiet is not None and quiet[1] <= now else None
        verdict = hang_verdict(now=now, running_since=start, step_times=seen[-51:],
                               last_activity=max(done) if done else None,
                               quiet_phase=phase, policy=policy)
        if verdict.hung:
            return now
        now += CHECK_EVERY_S
    return None


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([1, 2], 95) == pytest.approx(1.95)
    assert expected_interval([0, 2, 4, 4, 6]) == pytest.approx(2)  # a repeated step once
    assert expected_interval([7]) is None


def test_a_steady_job_is_never_flagged() -> None:
    steps = [1.0 + 2.0 * i for i in range(300)]
    assert flagged_at(steps, start=0.0, until=steps[-1]) is None


def test_a_job_that_turns_three_times_slower_but_steady_is_never_flagged() -> None:
    fast = [1.0 + 2.0 * i for i in range(60)]
    slow = [fast[-1] + 6.0 * (i + 1) for i in range(200)]
    assert flagged_at(fast + slow, start=0.0, until=slow[-1]) is None


def test_a_long_evaluation_is_not_flagged_and_a_hang_after_it_is() -> None:
    before = [1.0 + 2.0 * i for i in range(50)]
    began = before[-1] + 0.5
    ended = began + 900.0        # 45 x the threshold of 20 s
    after = [ended + 2.0 * (i + 1) for i in range(20)]
    steps = before + after
    assert flagged_at(steps, start=0.0, until=after[-1], quiet=("eval", began),
                      activity=[ended]) is None
    # The same evaluation that never ends within the cap is judged like any silence.
    capped = HangPolicy(k=10, floor_s=10, startup_s=15, quiet_phase_cap_s=120)
    at = flagged_at(before, start=0.0, until=began + 400, quiet=("eval", began), policy=capped)
    assert at is not None and began + 120 <= at <= began + 120 + CHECK_EVERY_S


def test_a_data_wait_is_not_a_quiet_phase() -> None:
    before = [1.0 + 2.0 * i for i in range(50)]
    at = flagged_at(before, start=0.0, until=before[-1] + 200, quiet=("data_wait", before[-1]))
    assert at is not None


@pytest.mark.parametrize("interval", [0.5, 2.0, 7.0])
def test_a_hang_is_flagged_within_k_times_p95_plus_one_check(interval: float) -> None:
    steps = [1.0 + interval * i for i in range(80)]
    hung_at = steps[-1]
    at = flagged_at(steps, start=0.0, until=hung_at + 1000)
    limit = max(POLICY.k * interval, POLICY.floor_s)
    assert at is not None and hung_at + limit < at <= hung_at + limit + CHECK_EVERY_S
    verdict = hang_verdict(now=at, running_since=0.0, step_times=steps[-51:], policy=POLICY)
    assert verdict.hung and verdict.p95_s == pytest.approx(interval)
    assert "p95 step interval" in verdict.why


def test_before_its_first_steps_a_job_gets_the_policys_startup_allowance_where_set(
        ) -> None:
    assert not hang_verdict(now=19.0, running_since=0.0, step_times=[], policy=POLICY).hung
    verdict = hang_verdict(now=26.0, running_since=0.0, step_times=[5.0], policy=POLICY)
    assert verdict.hung and verdict.threshold_s == 20.0 and "first steps" in verdict.why


def test_otherwise_the_startup_allowance_is_derived_from_the_jobs_shape() -> None:
    default = HangPolicy()  # no startup_s: the shape's
    plain = StartupShape()  # one replica, an image of the default size, nothing compiled
    assert plain.expected_s() == 60 + 80
    assert startup_allowance_s(plain, default) == 3 * 140
    assert not hang_verdict(now=419.0, running_since=0.0, step_times=[], policy=default).hung
    assert hang_verdict(now=421.0, running_since=0.0, step_times=[], policy=default).hung
    big = StartupShape(replicas=64, image_bytes=20_000_000_000, compiles=True,
                       restore_bytes=100_000_000_000)
    assert big.expected_s() == 60 + 200 + 6 * 15 + 300 + 500
    assert not hang_verdict(now=3449.0, running_since=0.0, step_times=[], policy=default,
                            startup=big).hung
    # Never under the team's floor; once stepping, the steps decide, whatever the shape.
    assert startup_allowance_s(StartupShape(image_bytes=0), HangPolicy(floor_s=600)) == 600
    steps = [1.0 + 2.0 * i for i in range(60)]
    assert hang_verdict(now=steps[-1] + 301, running_since=0.0, step_times=steps,
                        policy=default, startup=big).hung


def test_a_jobs_shape_is_read_from_its_custom_job() -> None:
    def pool(replicas: int, args: list[str], machine: dict | None = None) -> dict:
        return {"machineSpec": machine or {"machineType": "a2-highgpu-8g"},
                "replicaCount": str(replicas),
                "containerSpec": {"imageUri": "img", "command": ["python", "-m",
                                                                 "trainers.train"],
                                  "args": args}}

    def shape(*pools: dict, restore: int = 0) -> StartupShape:
        return startup_shape({"jobSpec": {"workerPoolSpecs": list(pools)}}, restore)

    assert shape(pool(1, [])) == StartupShape(replicas=1, compiles=False)
    assert shape(pool(1, ["--compile-blocks"]), {}, pool(7, [])) == StartupShape(
        replicas=8, compiles=True)
    assert shape(pool(2, ["--set", "compile_blocks=true"])).compiles
    tpu = pool(1, [], {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"})
    assert shape(tpu).compiles and shape(tpu, restore=5).restore_bytes == 5
    assert startup_shape(None) == StartupShape()


def test_a_run_started_again_gets_the_startup_allowance_again() -> None:
    steps = [0.5 * i for i in range(1, 200)]   # limit while stepping: the 10 s floor
    restarted = steps[-1] + 3.0                # e.g. its replica restarted in place
    assert hang_verdict(now=steps[-1] + 11, running_since=0.0, step_times=steps,
                        policy=POLICY).hung
    for now in (restarted + 11, restarted + 19):
        assert not hang_verdict(now=now, running_since=restarted, step_times=steps,
                                policy=POLICY).hung
    verdict = hang_verdict(now=restarted + 21, running_since=restarted, step_times=steps,
                           policy=POLICY)
    assert verdict.hung and "start-up allowance" in verdict.why
    again = [*steps, restarted + 4, restarted + 4.5]
    assert hang_verdict(now=restarted + 15, running_since=restarted, step_times=again,
                        policy=POLICY).hung


def _reports(ranks: int, steps: int, every: int, slow: dict[int, float],
             rng: random.Random) -> list[list[float]]:
    return [[0.2 * rng.uniform(0.9, 1.1) * slow.get(r, 1.0) for r in range(ranks)]
            for _ in range(every, steps + 1, every)]


def test_a_slow_rank_is_named_within_50_steps() -> None:
    rng = random.Random(3)
    reports = _reports(8, 50, 10, {5: 1.6}, rng)
    first = next(n for n in range(1, len(reports) + 1)
                 if straggler_verdict(reports[:n]).ranks)
    assert first * 10 <= 50
    verdict = straggler_verdict(reports)
    assert verdict.ranks == (5,) and verdict.slowdown[5] > 1.3 and "rank 5" in verdict.why


def test_an_even_run_names_nobody_and_one_slow_report_is_not_persistence() -> None:
    rng = random.Random(4)
    reports = _reports(8, 2000, 10, {}, rng)
    assert all(not straggler_verdict(reports[:n]).ranks for n in range(1, len(reports) + 1))
    blip = [*reports[:5], [0.2] * 7 + [0.9], *reports[5:7]]
    assert all(not straggler_verdict(blip[:n]).ranks for n in range(1, len(blip) + 1))
    assert straggler_verdict([[0.2, 0.5]] * 2, StragglerPolicy(reports=3)).ranks == ()


def test_milliseconds_of_jitter_name_nobody_however_large_the_ratio() -> None:
    # Host-side times of an even two-host run: one host 4.5x the other, 7 ms apart.
    assert straggler_verdict([[0.002, 0.009]] * 3).ranks == ()
    assert straggler_verdict([[0.003, 0.205]] * 3).ranks == (1,)
    assert straggler_verdict([[0.003, 0.205]] * 3, StragglerPolicy(min_excess_s=0.3)).ranks == ()
