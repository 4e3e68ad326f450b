"""A sweep on the local stack: a real tuning job on the emulator whose trials are real trainer
runs. Six trials, two at a time, over learning rate and warm-up; every trial's metric is the
validation loss its trainer reported; the best trial is the lowest; the API and the page show
all six; each trial's own job holds its step metrics and log lines, followed from its CustomJob
as any job's. A sweep whose trials fail stops at max_failed_trial_count."""

from __future__ import annotations

import time
from typing import Any

import pytest
from google.api_core import exceptions, retry
from google.protobuf import json_format

from config.devstack import Stack
from localvertex.client import logging_client
from tests.integration.test_end_to_end import browser_session
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
TRIAL_JOB = {"args": ["--preset", "tiny", "--steps", "4", "--batch-size", "4"],
             "chief": {"machine_type": "n1-standard-4"}}


def wait_sweep(api: Api, stack: Stack, sweep_id: int, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    sweep: dict = {}
    while time.monotonic() < deadline:
        sweep = api.get(f"/api/v1/sweeps/{sweep_id}/")
        if sweep["state"] in TERMINAL:
            return sweep
        dead = stack.dead()
        assert not dead, f"stack processes died: {dead}"
        time.sleep(1)
    raise AssertionError(f"sweep {sweep_id} did not end: {sweep}\n--- worker ---\n"
                         f"{stack.log_tail('worker')}\n--- emulator ---\n"
                         f"{stack.log_tail('emulator')}")


def reported_val_loss(stack: Stack, project: str, custom_job_id: str) -> float:
    """The last validation loss the trial's trainer printed, read from Cloud Logging."""
    client = logging_client(f"127.0.0.1:{stack.config.emulator_port}", stack.emulator_token)
    # The stack's log follower spends the project's read quota up to its ceiling, as it should;
    # a reader beside it waits for the minute's window to free a request, as any client would.
    patient = retry.Retry(predicate=retry.if_exception_type(exceptions.ResourceExhausted),
                          initial=1.0, maximum=10.0, timeout=120.0)
    entries = client.list_log_entries(request={
        "resource_names": [f"projects/{project}"],
        "filter": f'resource.labels.job_id="{custom_job_id}"'}, retry=patient)
    payloads = [json_format.MessageToDict(type(e).pb(e).json_payload) for e in entries]
    evals = [p for p in payloads if p.get("event") == "eval"]
    assert evals, f"trial job {custom_job_id} printed no eval event"
    return evals[-1]["metrics"]["val_loss"]


def wait_trial_job(api: Api, stack: Stack, trial: dict, timeout_s: float = 90) -> None:
    """The trial's job: SUCCEEDED, its four steps and its lines in the log store (the log
    follower trails the trial's end by a few seconds)."""
    job_id = trial["job"]
    assert job_id is not None, trial
    deadline = time.monotonic() + timeout_s
    steps: list = []
    lines: list = []
    while time.monotonic() < deadline:
        steps = api.get(f"/api/v1/jobs/{job_id}/steps/", limit=100)["results"]
        lines = api.get(f"/api/v1/jobs/{job_id}/logs/", limit=500)["results"]
        if len(steps) == 4 and any("finished at step 4" in line["message"] for line in lines):
            break
        time.sleep(1)
    assert [s["step"] for s in steps] == [1, 2, 3, 4], (trial, steps)
    assert all(s["loss"] is not None for s in steps)
    assert any("finished at step 4" in line["message"] for line in lines), lines[-5:]
    job = api.get(f"/api/v1/jobs/{job_id}/")
    assert job["kind"] == "trial" and job["state"] == "SUCCEEDED", job
    assert job["attempts"][0]["vertex_name"] == trial["custom_job"]


def test_a_six_trial_sweep_finds_the_lowest_validation_loss(
        stack: Stack, api: Api, seeded: dict[str, Any], browser: Any) -> None:
    body = {
        "display_name": "lr-warmup", "team": seeded["team"],
        "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
        "parameters": [
            {"parameter_id": "learning_rate", "type": "DOUBLE", "min_value": 1e-4,
             "max_value": 3e-2, "scale_type": "UNIT_LOG_SCALE"},
            {"parameter_id": "warmup_steps", "type": "INTEGER", "min_value": 0, "max_value": 3},
        ],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 6, "parallel_trial_count": 2, "max_failed_trial_count": 2,
        "trial_job": TRIAL_JOB, "trial_hours": "0.1",
    }
    response = api.post("/api/v1/sweeps/", body)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["estimate_micros"] > 0 and created["state"] == "QUEUED"
    sweep = wait_sweep(api, stack, created["id"], timeout_s=600)
    assert sweep["state"] == "SUCCEEDED", sweep["error_message"]
    trials = sweep["trials"]
    assert len(trials) == 6
    for trial in trials:
        assert trial["state"] == "SUCCEEDED", trial["infeasible_reason"]
        assert 1e-4 <= trial["parameters"]["learning_rate"] <= 3e-2
        assert trial["parameters"]["warmup_steps"] in (0, 1, 2, 3)
        # The metric Vertex read is exactly the validation loss the trainer printed.
        project = sweep["vertex_name"].split("/")[1]
        assert trial["objective"] == reported_val_loss(stack, project, trial["custom_job_id"])
        assert trial["final_step"] == 4
        # Its measurements, read from the trainer's reports: one evaluation, at the last step.
        assert trial["measurements"] == [{"step": 4, "metrics": {"val_loss": trial["objective"]}}]
    spans = sorted((t["started_at"], t["ended_at"]) for t in trials)
    assert all(sum(1 for s, e in spans if s <= start < e) <= 2 for start, _ in spans)
    lowest = min(trials, key=lambda t: t["objective"])
    assert sweep["best_trial"] == lowest["trial_id"]
    assert [t["trial_id"] for t in trials if t["best"]] == [lowest["trial_id"]]
    assert sweep["cost_micros"] > 0
    for trial in trials:
        wait_trial_job(api, stack, trial)
    # Trials' jobs are the sweep's: not among the jobs listed as jobs unless asked for.
    trial_jobs = {t["job"] for t in trials}
    assert not trial_jobs & {j["id"] for j in api.get("/api/v1/jobs/", limit=200)["results"]}
    assert trial_jobs <= {j["id"] for j in api.get("/api/v1/jobs/", kind="trial",
                                                   limit=200)["results"]}

    listed = api.get("/api/v1/sweeps/")["results"]
    assert any(s["id"] == sweep["id"] for s in listed)
    exported = api.get(f"/api/v1/sweeps/{sweep['id']}/export/", fmt="yaml")["text"]
    assert exported.startswith("# gcloud ai hp-tuning-jobs create")
    clone = api.get(f"/api/v1/sweeps/{sweep['id']}/clone/")
    assert clone["parameters"] == body["parameters"] and clone["team"] == seeded["team"]

    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/sweeps/{sweep['id']}/", timeout=10).text
    for trial in trials:
        assert f'data-trial="{trial["trial_id"]}"' in page
        assert f'href="/jobs/{trial["job"]}/"' in page
    assert 'id="compare-trials"' in page
    assert page.count('data-best="true"') == 1
    assert page.count('<svg class="sparkline"') == 6
    assert (f'<tr id="trial-{lowest["trial_id"]}" data-trial="{lowest["trial_id"]}" '
            'class="best" data-best="true">') in page
    assert 'id="sweep-chart"' in page and "js/parallel_coordinates." in page
    assert f"/sweeps/new/?from={sweep['id']}" in page
    assert f'data-sweep="{sweep["id"]}"' in session.get(f"{stack.web_url}/sweeps/",
                                                        timeout=10).text

    # The chart, drawn by the page's own script in a real browser: a line per trial, the
    # best one marked.
    context = browser.new_context(base_url=stack.web_url)
    try:
        context.add_cookies([{"name": c.name, "value": c.value, "url": stack.web_url}
                             for c in session.cookies])
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(f"/sweeps/{sweep['id']}/")
        # Attached, not visible: a trial that sits at the top of every axis is a horizontal
        # line, whose bounding box has no height, which Playwright counts as not visible.
        tab.wait_for_selector("#sweep-chart svg polyline", state="attached")
        assert tab.locator("#sweep-chart polyline").count() == 6
        thick = tab.locator('#sweep-chart polyline[stroke-width="3"]')
        assert thick.count() == 1 and thick.get_attribute("data-trial") == lowest["trial_id"]
        axes = tab.locator("#sweep-chart text").all_text_contents()
        assert {"learning_rate", "warmup_steps", "val_loss"} <= set(axes)
        assert not errors, errors
    finally:
        context.close()


def test_failing_trials_count_against_max_failed(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    # A learning rate the trainer refuses: the first two grid points fail, and the sweep
    # stops there without running the third.
    body = {
        "display_name": "bad-lr", "team": seeded["team"],
        "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
        "parameters": [{"parameter_id": "learning_rate", "type": "DISCRETE",
                        "values": [-2.0, -1.0, 0.002]}],
        "algorithm": "GRID_SEARCH",
        "max_trial_count": 3, "parallel_trial_count": 1, "max_failed_trial_count": 2,
        "trial_job": TRIAL_JOB,
    }
    response = api.post("/api/v1/sweeps/", body)
    assert response.status_code == 201, response.text
    sweep = wait_sweep(api, stack, response.json()["id"], timeout_s=300)
    assert sweep["state"] == "FAILED"
    assert "max_failed_trial_count 2" in sweep["error_message"]
    states = [t["state"] for t in sweep["trials"]]
    assert states == ["INFEASIBLE", "INFEASIBLE"]
    assert sweep["best_trial"] is None


def test_a_bad_sweep_names_its_field_and_creates_nothing(
        api: Api, seeded: dict[str, Any]) -> None:
    before = api.get("/api/v1/sweeps/")["count"]
    response = api.post("/api/v1/sweeps/", {
        "display_name": "bad", "team": seeded["team"],
        "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
        "parameters": [{"parameter_id": "lr; rm -rf /", "type": "DOUBLE", "min_value": 0.1,
                        "max_value": 0.2}],
        "max_trial_count": 2, "parallel_trial_count": 3, "trial_job": TRIAL_JOB})
    assert response.status_code == 400
    errors = response.json()
    assert "parameters[0].parameter_id" in errors and "parallel_trial_count" in errors
    assert api.get("/api/v1/sweeps/")["count"] == before
