"""Spot jobs on the real stack: preempted three times and recovered each time from its newest
checkpoint; a job whose spot attempt ends in a STOCKOUT recovered by the configured strategy;
an invalid job refused once and never retried; Slack told once per chosen transition."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from tests.integration.survival.stackutil import (
    TERMINAL,
    admin,
    arm_preemptions,
    custom_jobs_by_job,
    vertex_job_id,
    wait,
)
from tests.notifications.slack_recorder import SlackRecorder
from tests.stacks import Api, SurvivalStack, after_worker_runs, sleeping_job

pytestmark = pytest.mark.integration

HOOK = "https://hooks.slack.com/services/T0SPOT/B0SPOT/spotspotspotspot"
HOOK_PATH = "/services/T0SPOT/B0SPOT/spotspotspotspot"
FAILED_ONLY_HOOK = "https://hooks.slack.com/services/T0SPOT/B0FAIL/failfailfailfail"


def _add_channel(api: Api, team: str, name: str, url: str, notify_on: list[str]) -> None:
    response = api.post(f"/api/v1/teams/{team}/channels/", {
        "name": name, "kind": "webhook", "webhook_url": url, "notify_on": notify_on})
    assert response.status_code == 201, response.text
    assert url not in response.text


def test_three_preemptions_three_restarts_and_one_slack_message_per_transition(
        survival_stack: SurvivalStack, survival_api: Api, survival_seeded: dict[str, Any],
        recorder: SlackRecorder) -> None:
    api, stack, team = survival_api, survival_stack, survival_seeded["team"]
    _add_channel(api, team, "spot-watch", HOOK,
                 ["submitted", "running", "preempted", "recovered", "succeeded"])
    _add_channel(api, team, "failures", FAILED_ONLY_HOOK, ["failed"])
    response = api.post("/api/v1/jobs/", {
        "name": "spot-3-preemptions", "spot": True, "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny", "--steps", "600", "--checkpoint-every", "200",
                 "--eval-every", "0"],
    })
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    # Three preemptions armed on the emulator for steps the trainer reports, so each lands
    # mid-run however fast this machine trains: 15 steps past where it was seen RUNNING, then
    # 40 and 65, in the runs that resumed from the checkpoint each SIGTERM saved (grace 20 s,
    # as a spot VM's notice).
    def running() -> dict | None:
        job = api.get(f"/api/v1/jobs/{job_id}/")
        assert job["state"] not in TERMINAL, job
        return job if job["state"] == "RUNNING" else None

    job = wait(running, timeout_s=120, what="RUNNING", stack=stack)
    seen = job["last_step"] or 0

    arm_preemptions(stack, job, [seen + 15, seen + 40, seen + 65], grace_s=20)

    def restarted() -> list | None:
        rows = api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"]
        rows = [r for r in rows if r["replica"] == "workerpool0-0"]
        return rows if len(rows) == 3 and all(r["resumed_from_step"] is not None
                                              for r in rows) else None

    wait(restarted, timeout_s=300, what="three preemptions and their resumes", stack=stack)

    job = wait(lambda: (lambda j: j if j["state"] in TERMINAL else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=240, what="the job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    assert job["restarts"] == 3 and job["attempt"] == 1, "Vertex's own restarts sufficed"

    rows = [r for r in api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"]
            if r["replica"] == "workerpool0-0"]
    assert len(rows) == 3
    for row in rows:
        assert row["cause"] == "preemption" and "preempted" in row["sources"]
        assert row["checkpoint_step"] == row["resumed_from_step"], "linked to its checkpoint"
        assert row["resumed_from_path"].endswith(f"step-{row['resumed_from_step']:08d}")
        assert row["steps_lost"] is not None and row["steps_lost"] <= 1

    page = stack_page(stack, survival_seeded, f"/jobs/{job_id}/")
    assert page.count('class="event kind-preempted kind-restart"') == 3
    assert "resumed from" in page

    # Slack: one message per transition chosen, none for the others.
    def all_sent() -> list | None:
        mine = [r for r in recorder.to(HOOK_PATH) if f"#{job_id}" in r.text]
        return mine if len(mine) >= 9 else None

    mine = wait(all_sent, timeout_s=60, what="the Slack messages", stack=stack)
    # A duplicate would be sent by one of the delivery sweeps that follow.
    after_worker_runs(stack, "controlplane.notifications.tasks.deliver_pending", runs=2)
    mine = [r for r in recorder.to(HOOK_PATH) if f"#{job_id}" in r.text]
    kinds = collections.Counter(_kind(r.text) for r in mine)
    assert kinds == {"submitted": 1, "running": 1, "preempted": 3, "recovered": 3,
                     "succeeded": 1}, [r.text for r in mine]
    assert not [r for r in recorder.received if "B0FAIL" in r.path and f"#{job_id}" in r.text]
    final = next(r for r in mine if _kind(r.text) == "succeeded").body
    fields = " ".join(f["text"] for f in final["blocks"][1]["fields"])
    assert "*Restarts*\n3" in fields and "*State*\nSUCCEEDED" in fields


def _kind(text: str) -> str:
    for words, kind in (("submitted to Vertex", "submitted"), ("is now RUNNING", "running"),
                        ("is now SUCCEEDED", "succeeded"), ("had a", "preempted"),
                        ("recovered", "recovered")):
        if words in text:
            return kind
    return text


def stack_page(stack: SurvivalStack, seeded: dict[str, Any], path: str) -> str:
    from tests.integration.test_end_to_end import browser_session

    session = browser_session(stack, seeded["username"], seeded["password"])
    response = session.get(stack.web_url + path, timeout=10)
    assert response.status_code == 200
    return response.text


def test_a_stockout_is_recovered_by_the_configured_strategy(
        survival_stack: SurvivalStack, survival_api: Api,
        survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    response = api.post("/api/v1/jobs/", sleeping_job("spot-stockout", 8, spot=True))
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = wait(lambda: (lambda j: j if j["state"] == "RUNNING" else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=60, what="RUNNING", stack=stack)
    vertex_id = vertex_job_id(job)
    with admin(stack) as client:
        # Past Vertex's six restarts of a preempted spot job, it fails with a STOCKOUT.
        def replica_pid() -> int | None:
            info = client.job(vertex_id)
            if info["state"] != "JOB_STATE_RUNNING":
                return None
            return (info["replicas"].get("workerpool0-0") or {}).get("pid")

        pid = wait(replica_pid, timeout_s=30, what="a replica", stack=stack, interval_s=0.1)
        for n in range(1, 8):
            client.preempt(vertex_id, grace_s=0)
            if n == 7:
                break
            # The emulator restarts it as Vertex does: a new process, running again.
            pid = wait(lambda old=pid: (lambda p: p if p not in (None, old) else None)(
                replica_pid()), timeout_s=30, what=f"the restart after preemption {n}",
                stack=stack, interval_s=0.1)
        wait(lambda: client.job(vertex_id)["state"] == "JOB_STATE_FAILED", timeout_s=30,
             what="the STOCKOUT", stack=stack, interval_s=0.2)

    job = wait(lambda: (lambda j: j if j["state"] in TERMINAL else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=120, what="the job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    attempts = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    assert [(a["number"], a["reason"], a["scheduling"], a["failure"]) for a in attempts] == [
        (1, "submit", "SPOT", "stockout"), (2, "recovery", "STANDARD", "")]
    assert attempts[0]["error_code"] == 8 and "STOCKOUT" in attempts[0]["error_message"]
    customs = custom_jobs_by_job(stack, [job_id])[job_id]
    assert sorted(c.display_name for c in customs) == [f"cp-{job_id}-a1", f"cp-{job_id}-a2"]
    events = api.get(f"/api/v1/jobs/{job_id}/events/", limit=1000)["results"]
    [recovery] = [e for e in events if e["kind"] == "recovery"]
    assert recovery["data"]["scheduling"] == "STANDARD"
    assert any("FLEX_START" in s for s in recovery["data"]["skipped"])
    page = stack_page(stack, survival_seeded, f"/jobs/{job_id}/")
    assert f"cp-{job_id}-a2" in page and "stockout" in page and "recovery</span> 1 of" in page


def test_an_invalid_job_fails_once_and_is_not_retried(
        survival_stack: SurvivalStack, survival_api: Api) -> None:
    api, stack = survival_api, survival_stack
    with admin(stack) as client:
        # Vertex refuses the job as written (as for an image it cannot use).
        client.set_faults("CreateCustomJob", "INVALID_ARGUMENT", 1.0)
        try:
            response = api.post("/api/v1/jobs/", sleeping_job("bad-image", 1, spot=True))
            assert response.status_code == 201, response.text
            job_id = response.json()["id"]
            job = wait(lambda: (lambda j: j if j["state"] in TERMINAL else None)(
                api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=60, what="FAILED", stack=stack)
        finally:
            client.set_faults("CreateCustomJob", "INVALID_ARGUMENT", 0)
    assert job["state"] == "FAILED" and "INVALID_ARGUMENT" in job["error_message"]
    after_worker_runs(stack, "controlplane.runs.tasks.reconcile_jobs", runs=3)  # none tries again
    attempts = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    assert [(a["number"], a["failure"], a["vertex_name"]) for a in attempts] == [
        (1, "config", "")]
    assert custom_jobs_by_job(stack, [job_id]) == {}
