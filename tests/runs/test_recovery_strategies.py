"""Recovery strategies and failure classification: pure decisions, no database."""

from __future__ import annotations

import random
from typing import Any

import pytest

from controlplane.runs import recovery, recovery_policy
from controlplane.runs.recovery import Failure, Placement, Policy
from vertexplan.composer import JobRequest

CPU_JOB = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
    "containerSpec": {"imageUri": "img", "command": ["true"]}}],
    "scheduling": {"strategy": "SPOT"}}}
L4_JOB = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                    "acceleratorCount": 1}, "replicaCount": "1",
    "containerSpec": {"imageUri": "img", "command": ["true"]}}],
    "scheduling": {"strategy": "SPOT"}}}
HOME = Placement("SPOT", "us-central1")


def parsed_policy(request: dict[str, Any]) -> tuple[Policy, dict[str, list[str]]]:
    """The recovery policy of a request written as a dict, and its errors."""
    return recovery_policy.parse_policy(JobRequest.from_dict(request))


@pytest.mark.parametrize(("code", "message", "spot", "preempted", "expected"), [
    (8, "The job was preempted 7 times (STOCKOUT).", True, False, Failure.STOCKOUT),
    (13, "The replica workerpool0-0 exited with a non-zero status of 143.", True, False,
     Failure.PREEMPTION),
    (13, "The replica workerpool0-0 exited with a non-zero status of 1.", True, True,
     Failure.PREEMPTION),
    (13, "The replica workerpool0-0 exited with a non-zero status of 1.", True, False,
     Failure.APPLICATION),
    (3, "Invalid image URI", True, False, Failure.CONFIG),
    (13, "Unable to pull image us-docker.pkg.dev/p/r/i:1: manifest unknown", True, True,
     Failure.CONFIG),
    (7, "Permission denied on service account", True, False, Failure.CONFIG),
    (4, "The job ran longer than its scheduling.timeout", True, False, Failure.TIMEOUT),
    (1, "CANCELED", True, False, Failure.CANCELLED),
])
def test_classify(code: int, message: str, spot: bool, preempted: bool,
                  expected: Failure) -> None:
    assert recovery.classify(state="JOB_STATE_FAILED", error_code=code, error_message=message,
                             spot=spot, preempted=preempted) == expected


def test_only_failed_attempts_are_failures() -> None:
    assert recovery.classify(state="JOB_STATE_SUCCEEDED", error_code=0, error_message="",
                             spot=True, preempted=True) == Failure.NONE


def _plan(policy: Policy, failure: Failure, current: Placement = HOME, done: int = 0,
          job: dict | None = None) -> recovery.Decision:
    return recovery.plan(policy=policy, custom_job=job or L4_JOB, home=HOME, current=current,
                         failure=failure, recoveries_done=done, rng=random.Random(1))


def test_failover_retries_a_preemption_in_place_and_moves_on_after_a_stockout() -> None:
    policy = Policy("failover", 5, fallback=("FLEX_START", "STANDARD"))
    assert _plan(policy, Failure.PREEMPTION).placement == HOME
    flex = _plan(policy, Failure.STOCKOUT).placement
    assert flex == Placement("FLEX_START", "us-central1")
    assert _plan(policy, Failure.STOCKOUT, current=flex).placement == \
        Placement("STANDARD", "us-central1")
    last = Placement("STANDARD", "us-central1")
    assert _plan(policy, Failure.STOCKOUT, current=last).placement == last


def test_fallbacks_vertex_would_refuse_are_skipped_with_the_reason() -> None:
    policy = Policy("failover", 5, fallback=("FLEX_START", "STANDARD"))
    decision = _plan(policy, Failure.STOCKOUT, job=CPU_JOB)
    assert decision.placement == Placement("STANDARD", "us-central1")
    assert decision.skipped and "FLEX_START" in decision.skipped[0]


def test_eager_next_region_changes_region_first() -> None:
    policy = Policy("eager_next_region", 5, fallback=("STANDARD",),
                    regions=("us-east1", "europe-west4"))
    order = [_plan(policy, Failure.PREEMPTION).placement]
    for _ in range(3):
        order.append(_plan(policy, Failure.PREEMPTION, current=order[-1]).placement)
    assert order == [Placement("SPOT", "us-east1"), Placement("SPOT", "europe-west4"),
                     Placement("STANDARD", "us-central1"), Placement("STANDARD", "us-east1")]


@pytest.mark.parametrize("failure", [Failure.CONFIG, Failure.APPLICATION, Failure.TIMEOUT,
                                     Failure.CANCELLED])
def test_what_another_attempt_would_repeat_is_never_recovered(failure: Failure) -> None:
    decision = _plan(Policy("failover", 5), failure)
    assert decision.placement is None and "not recovered" in decision.why


def test_at_most_n_recoveries() -> None:
    policy = Policy("failover", 2)
    assert _plan(policy, Failure.STOCKOUT, done=1).placement is not None
    decision = _plan(policy, Failure.STOCKOUT, done=2)
    assert decision.placement is None and "2 recoveries" in decision.why


def test_no_strategy_no_recovery() -> None:
    assert _plan(Policy("", 3), Failure.STOCKOUT).placement is None
    assert _plan(Policy("none", 3), Failure.STOCKOUT).placement is None


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = Policy("failover", 10, backoff_s=10, backoff_cap_s=60)
    rng = random.Random(7)
    waits = [recovery.backoff_s(policy, n, rng) for n in range(1, 8)]
    for n, wait in enumerate(waits, start=1):
        capped = min(60, 10 * 2 ** (n - 1))
        assert capped / 2 <= wait <= capped
    assert len({round(w, 6) for w in waits}) == len(waits), "jittered, not identical"


def test_strategies_are_registered_by_name() -> None:
    assert {"none", "failover", "eager_next_region"} <= set(recovery.STRATEGIES)

    @recovery.register("test_only_same_place")
    class SamePlace(recovery.Strategy):
        def order(self, schedulings: list[str], regions: list[str]) -> list[Placement]:
            return [Placement(schedulings[0], regions[0])]

    try:
        policy = Policy("test_only_same_place", 1, fallback=("STANDARD",))
        assert _plan(policy, Failure.STOCKOUT).placement == HOME
    finally:
        recovery.STRATEGIES.pop("test_only_same_place")


def test_policy_from_a_request(settings) -> None:
    settings.CP_MAX_RECOVERIES = 4
    policy, errors = parsed_policy({"spot": True})
    assert errors == {} and policy.strategy == "failover" and policy.max_recoveries == 4
    policy, errors = parsed_policy({"spot": False})
    assert not policy.enabled
    policy, errors = parsed_policy({"spot": True, "recovery": {
        "strategy": "eager_next_region", "max_recoveries": 2, "fallback": ["STANDARD"]}})
    assert errors == {} and policy.strategy == "eager_next_region"
    assert policy.fallback == ("STANDARD",)
    _, errors = parsed_policy({"recovery": {
        "strategy": "sometimes", "fallback": ["X"], "max_recoveries": -1, "extra": 1}})
    assert set(errors) == {"recovery.strategy", "recovery.fallback", "recovery.max_recoveries",
                           "recovery.extra"}


def test_preemptions_retry_in_place_up_to_the_limit_then_move_on() -> None:
    policy = Policy("failover", 9, fallback=("FLEX_START", "STANDARD"), retries_in_place=2)

    def after(in_place: int) -> Placement | None:
        return recovery.plan(policy=policy, custom_job=L4_JOB, home=HOME, current=HOME,
                             failure=Failure.PREEMPTION, recoveries_done=in_place,
                             rng=random.Random(1), tries_here=in_place + 1).placement

    assert after(0) == HOME and after(1) == HOME
    assert after(2) == Placement("FLEX_START", "us-central1")


def test_retries_in_place_is_part_of_the_policy_and_checked() -> None:
    policy, errors = parsed_policy({"spot": True,
                                                   "recovery": {"retries_in_place": 0}})
    assert not errors and policy.retries_in_place == 0
    assert recovery.policy_of(type("J", (), {
        "recovery_options": policy.options(), "recovery_strategy": "failover",
        "max_recoveries": 3})()).retries_in_place == 0
    _, errors = parsed_policy({"recovery": {"retries_in_place": 99}})
    assert "recovery.retries_in_place" in errors


# --- limits per step and per region, backoff per step ---------------------------------------

EAST = "us-east1"
SPOT_C, FLEX_C, STD_C = (Placement(s, "us-central1") for s in ("SPOT", "FLEX_START",
                                                                 "STANDARD"))
SPOT_E, FLEX_E, STD_E = (Placement(s, EAST) for s in ("SPOT", "FLEX_START", "STANDARD"))


def _walk(policy: Policy, failures: int, failure: Failure = Failure.STOCKOUT
          ) -> tuple[list[Placement], list[recovery.Decision]]:
    """The placements a job visits when every attempt ends with `failure`, with each
    decision, counting its tries the way the lifecycle does (streaks over its attempts)."""
    visited, decisions = [HOME], []
    for done in range(failures):
        here, in_region = recovery.streaks(visited[::-1])
        decision = recovery.plan(policy=policy, custom_job=L4_JOB, home=HOME,
                                 current=visited[-1], failure=failure, recoveries_done=done,
                                 rng=random.Random(3), tries_here=here,
                                 tries_in_region=in_region)
        decisions.append(decision)
        if decision.placement is None:
            break
        visited.append(decision.placement)
    return visited, decisions


def test_streaks_count_tries_in_a_row_at_a_placement_and_in_a_region() -> None:
    assert recovery.streaks([]) == (0, 0)
    assert recovery.streaks([FLEX_C, FLEX_C, SPOT_C, SPOT_E, SPOT_C]) == (2, 3)
    assert recovery.streaks([SPOT_E, STD_C]) == (1, 1)


def test_the_default_is_one_try_per_step_then_the_next_region() -> None:
    policy = Policy("failover", 9, fallback=("FLEX_START", "STANDARD"), regions=(EAST,))
    visited, _ = _walk(policy, 3)
    assert visited == [SPOT_C, FLEX_C, STD_C, SPOT_E]


def test_a_stockout_is_retried_at_its_step_up_to_its_limit_before_moving_on() -> None:
    policy = Policy("failover", 20, fallback=("FLEX_START", "STANDARD"), regions=(EAST,),
                    tries_per_step=2)
    visited, decisions = _walk(policy, 11)
    assert visited == [SPOT_C, SPOT_C, FLEX_C, FLEX_C, STD_C, STD_C,
                       SPOT_E, SPOT_E, FLEX_E, FLEX_E, STD_E, STD_E]
    assert "try 2 of 2 at this step" in decisions[0].why
    assert "the next step" in decisions[1].why


def test_the_last_step_keeps_trying_until_max_recoveries() -> None:
    policy = Policy("failover", 5, fallback=("STANDARD",), tries_per_step=2)
    visited, decisions = _walk(policy, 6)
    assert visited == [SPOT_C, SPOT_C, STD_C, STD_C, STD_C, STD_C]
    assert decisions[-1].placement is None and "all 5 recoveries" in decisions[-1].why


def test_a_region_limit_moves_on_before_the_steps_are_used_up() -> None:
    policy = Policy("failover", 20, fallback=("FLEX_START", "STANDARD"), regions=(EAST,),
                    tries_per_step=2, tries_per_region=3)
    visited, decisions = _walk(policy, 4)
    assert visited == [SPOT_C, SPOT_C, FLEX_C, SPOT_E, SPOT_E]
    assert "3 of 3 tries in us-central1" in decisions[2].why
    # The last region has nowhere further to go: its steps' limits still hold.
    visited, _ = _walk(policy, 9)
    assert visited[3:] == [SPOT_E, SPOT_E, FLEX_E, FLEX_E, STD_E, STD_E, STD_E]


def test_eager_next_region_keeps_a_stockout_at_its_step_up_to_the_limit() -> None:
    policy = Policy("eager_next_region", 9, fallback=("STANDARD",), regions=(EAST,),
                    tries_per_step=2)
    visited, _ = _walk(policy, 5)
    assert visited == [SPOT_C, SPOT_C, SPOT_E, SPOT_E, STD_C, STD_C]


def test_preemptions_count_against_retries_in_place_not_tries_per_step() -> None:
    policy = Policy("failover", 9, fallback=("STANDARD",), retries_in_place=1,
                    tries_per_step=5)
    visited, decisions = _walk(policy, 3, Failure.PREEMPTION)
    assert visited == [SPOT_C, SPOT_C, STD_C, STD_C]
    assert "retry 1 of 1 in place" in decisions[0].why
    assert "1 of 1 retries in place used" in decisions[1].why


def test_the_wait_doubles_at_one_step_is_capped_and_starts_again_at_the_next() -> None:
    policy = Policy("failover", 20, fallback=("STANDARD",), backoff_s=10, backoff_cap_s=25,
                    tries_per_step=4)
    visited, decisions = _walk(policy, 5)
    assert visited == [SPOT_C, SPOT_C, SPOT_C, SPOT_C, STD_C, STD_C]
    waits = [d.delay_s for d in decisions]
    # Jitter: half to all of min(cap, base x 2^(tries here - 1)).
    for wait, capped in zip(waits, (10, 20, 25, 10, 10), strict=True):
        assert capped / 2 <= wait <= capped, waits
    assert waits[3] <= 10, "the next step starts again from backoff_s"
    none = Policy("failover", 3, fallback=("STANDARD",), backoff_s=0, backoff_cap_s=0)
    assert [d.delay_s for d in _walk(none, 2)[1]] == [0, 0]


def test_the_new_limits_and_backoff_come_from_the_request_and_travel_with_the_job(
        settings: Any) -> None:
    settings.CP_RECOVERY_BACKOFF_S = 10
    settings.CP_RECOVERY_BACKOFF_CAP_S = 300
    policy, errors = parsed_policy({"spot": True, "recovery": {
        "tries_per_step": 3, "tries_per_region": 7, "backoff_s": 2.5, "backoff_cap_s": 60}})
    assert errors == {}
    assert (policy.tries_per_step, policy.tries_per_region) == (3, 7)
    assert (policy.backoff_s, policy.backoff_cap_s) == (2.5, 60)
    job = type("J", (), {"recovery_options": policy.options(), "recovery_strategy": "failover",
                         "max_recoveries": 3})()
    assert recovery.policy_of(job) == policy
    # Left out: one try per step, no region limit, the site's backoff.
    policy, _ = parsed_policy({"spot": True, "recovery": {}})
    assert (policy.tries_per_step, policy.tries_per_region) == (1, 0)
    assert (policy.backoff_s, policy.backoff_cap_s) == (10, 300)
    # A first wait above the site's cap raises the cap; a cap below the site's first wait
    # lowers the first wait.
    policy, errors = parsed_policy({"recovery": {"backoff_s": 600}})
    assert not errors and (policy.backoff_s, policy.backoff_cap_s) == (600, 600)
    policy, errors = parsed_policy({"recovery": {"backoff_cap_s": 4}})
    assert not errors and (policy.backoff_s, policy.backoff_cap_s) == (4, 4)


@pytest.mark.parametrize(("field", "value", "says"), [
    ("tries_per_step", 0, "whole number from 1 to 10"),
    ("tries_per_step", 11, "whole number from 1 to 10"),
    ("tries_per_step", "2", "whole number from 1 to 10"),
    ("tries_per_step", True, "whole number from 1 to 10"),
    ("tries_per_region", -1, "whole number from 0 to 50"),
    ("tries_per_region", 2.5, "whole number from 0 to 50"),
    ("backoff_s", -1, "number of seconds from 0 to 3600"),
    ("backoff_s", 3601, "number of seconds from 0 to 3600"),
    ("backoff_s", "soon", "number of seconds from 0 to 3600"),
    ("backoff_s", False, "number of seconds from 0 to 3600"),
    ("backoff_cap_s", 86401, "number of seconds from 0 to 86400"),
    ("backoff_cap_s", None, "number of seconds from 0 to 86400"),
])
def test_bad_limits_and_backoffs_are_refused_by_field_with_the_valid_range(
        field: str, value: Any, says: str) -> None:
    _, errors = parsed_policy({"spot": True, "recovery": {field: value}})
    assert list(errors) == [f"recovery.{field}"] and says in errors[f"recovery.{field}"][0]


def test_a_backoff_cap_below_the_first_wait_is_refused() -> None:
    _, errors = parsed_policy({"spot": True, "recovery": {
        "backoff_s": 30, "backoff_cap_s": 20}})
    assert errors == {"recovery.backoff_cap_s": [
        "must be at least backoff_s (30 s): the cap on the wait"]}
