"""A spot job on the real stack (emulator, worker, beat, web server) preempted twice, with no
notice to save (grace 0): its final cost is the billed running time only, without the time it
was queued, provisioning or waiting to restart after each preemption, and the compute each
preemption threw away (the work since the checkpoint it resumed from) is shown apart."""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction
from typing import Any

import pytest

from tests.integration.survival.stackutil import TERMINAL, arm_preemptions, wait
from tests.stacks import Api, SurvivalStack

pytestmark = pytest.mark.integration

# n1-standard-4 and its 100 GB pd-ssd in us-central1 at the spot rate, micro-dollars an hour:
# 0.09550985 USD and 0.195494 USD/GB-month x 100 / 730 h (vertex_training_prices.csv).
MACHINE_SPOT = 95_510
DISK = 26_780


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _micros(rate: int, seconds: Fraction) -> int:
    exact = rate * seconds / 3600
    return (2 * exact.numerator + exact.denominator) // (2 * exact.denominator)


def test_two_preemptions_billed_time_excludes_queued_and_preempted_time_lost_apart(
        survival_stack: SurvivalStack, survival_api: Api,
        survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    response = api.post("/api/v1/jobs/", {
        "name": "spot-cost", "spot": True, "chief": {"machine_type": "n1-standard-4"},
        "timeout_hours": 1,
        "args": ["--preset", "tiny", "--steps", "160", "--checkpoint-every", "20",
                 "--eval-every", "0"],
    })
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    # Both preemptions are armed on the emulator for steps the trainer reports, so they land
    # mid-run however fast this machine trains: at step 30 (ten steps past the checkpoint of
    # step 20, work the preemption throws away), and at step 70 of the run that resumed.
    def submitted() -> dict | None:
        job = api.get(f"/api/v1/jobs/{job_id}/")
        assert job["state"] not in TERMINAL, job
        return job if job["attempts"] and job["attempts"][0]["vertex_name"] else None

    job = wait(submitted, timeout_s=120, what="the CustomJob", stack=stack)

    arm_preemptions(stack, job, [30, 70], grace_s=0)

    def resumed() -> list | None:
        rows = [r for r in api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"]
                if r["replica"] == "workerpool0-0"]
        return rows if len(rows) == 2 and all(r["resumed_from_step"] is not None
                                              for r in rows) else None

    wait(resumed, timeout_s=240, what="both preemptions and their resumes", stack=stack)

    job = wait(lambda: (lambda j: j if j["state"] in TERMINAL else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=240, what="the job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]

    def settled() -> dict | None:
        body = api.get(f"/api/v1/jobs/{job_id}/")
        listed = [j for j in api.get("/api/v1/jobs/")["results"] if j["id"] == job_id]
        return body if listed and listed[0]["cost_micros"] == body["cost"]["billed_micros"] \
            else None

    job = wait(settled, timeout_s=60, what="the stored cost", stack=stack)
    cost = job["cost"]
    assert cost["status"] == "final"
    [attempt] = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    restarts = [r for r in api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"]
                if r["replica"] == "workerpool0-0"]
    assert len(restarts) == 2 and all(r["cause"] == "preemption" for r in restarts)

    # Worked out from the stored times: running time less each preemption's gap.
    started, ended = _at(attempt["started_at"]), _at(attempt["ended_at"])
    submitted = _at(attempt["submitted_at"])
    gaps = [_at(r["resumed_at"]) - _at(r["occurred_at"]) for r in restarts]
    assert all(gap.total_seconds() > 0 for gap in gaps)
    billed_s = Fraction((ended - started - sum(gaps, start=ended - ended))
                        // ended.resolution, 1_000_000)
    expected = _micros(MACHINE_SPOT, billed_s) + _micros(DISK, billed_s)
    assert cost["billed_micros"] == expected, (cost, billed_s)
    # What billing everything from submission to the end would have charged is more: queued,
    # provisioning and preempted time are not billed.
    everything = Fraction((ended - submitted) // ended.resolution, 1_000_000)
    assert _micros(MACHINE_SPOT + DISK, everything) > cost["billed_micros"]
    breakdown = cost["breakdown"]
    assert [p["not_billed_s"] for p in breakdown["preemptions"]] == pytest.approx(
        [g.total_seconds() for g in gaps], abs=1e-6)

    # Lost compute: each preemption lost the steps since the checkpoint it resumed from.
    lost = [p for p in breakdown["preemptions"] if p["replica"] == "workerpool0-0"]
    assert len(lost) == 2
    for row, restart in zip(lost, restarts, strict=True):
        assert restart["steps_lost"] and restart["steps_lost"] > 0
        assert row["lost_s"] > 0 and row["lost"] > 0
        assert row["lost"] == _micros(MACHINE_SPOT + DISK,
                                      Fraction(row["lost_s"]).limit_denominator(1_000_000))
    assert cost["lost_micros"] == sum(p["lost"] for p in lost)
    assert cost["useful_micros"] == cost["billed_micros"] - cost["lost_micros"] > 0
    # Goodput: the billed categories add up to the billed time (one machine: machine-seconds),
    # and the steps run again are those the preemptions lost.
    goodput = api.get(f"/api/v1/jobs/{job_id}/goodput/")
    billed_acc = goodput["billed_accelerator_seconds"]
    assert (abs(sum(c["accelerator_seconds"] for c in goodput["categories"] if c["billed"])
                - billed_acc) <= 0.01 * billed_acc
            and abs(billed_acc - float(billed_s)) <= 0.01 * float(billed_s)
            and goodput["replayed_steps"] == sum(r["steps_lost"] for r in restarts)), goodput

    # The job page shows the final cost and the lost compute apart.
    from tests.integration.survival.test_spot_recovery import stack_page

    page = stack_page(stack, survival_seeded, f"/jobs/{job_id}/")
    assert "Final cost" in page and "Lost to preemptions" in page
    assert page.count("workerpool0-0</td>") >= 2
