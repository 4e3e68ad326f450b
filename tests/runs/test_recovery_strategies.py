"""Recovery strategies and failure classification: pure decisions, no database."""

from __future__ import annotations

import random

import pytest

from controlplane.runs import recovery
from controlplane.runs.recovery import Failure, Placement, Policy

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
    policy, errors = recovery.parse_policy({"spot": True})
    assert errors == {} and policy.strategy == "failover" and policy.max_recoveries == 4
    policy, errors = recovery.parse_policy({"spot": False})
    assert not policy.enabled
    policy, errors = recovery.parse_policy({"spot": True, "recovery": {
        "strategy": "eager_next_region", "max_recoveries": 2, "fallback": ["STANDARD"]}})
    assert errors == {} and policy.strategy == "eager_next_region"
    assert policy.fallback == ("STANDARD",)
    _, errors = recovery.parse_policy({"recovery": {"strategy": "sometimes", "fallback": ["X"],
                                                    "max_recoveries": -1, "extra": 1}})
    assert set(errors) == {"recovery.strategy", "recovery.fallback", "recovery.max_recoveries",
                           "recovery.extra"}


def test_preemptions_retry_in_place_up_to_the_limit_then_move_on() -> None:
    policy = Policy("failover", 9, fallback=("FLEX_START", "STANDARD"), retries_in_place=2)

    def after(in_place: int) -> Placement | None:
        return recovery.plan(policy=policy, custom_job=L4_JOB, home=HOME, current=HOME,
                             failure=Failure.PREEMPTION, recoveries_done=in_place,
                             rng=random.Random(1), in_place_done=in_place).placement

    assert after(0) == HOME and after(1) == HOME
    assert after(2) == Placement("FLEX_START", "us-central1")


def test_retries_in_place_is_part_of_the_policy_and_checked() -> None:
    policy, errors = recovery.parse_policy({"spot": True, "recovery": {"retries_in_place": 0}})
    assert not errors and policy.retries_in_place == 0
    assert recovery.policy_of(type("J", (), {
        "recovery_options": policy.options(), "recovery_strategy": "failover",
        "max_recoveries": 3})()).retries_in_place == 0
    _, errors = recovery.parse_policy({"recovery": {"retries_in_place": 99}})
    assert "recovery.retries_in_place" in errors
