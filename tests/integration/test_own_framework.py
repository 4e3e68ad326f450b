"""A team's own Hugging Face Trainer script (tests/integration/own_frameworks/, no line of
the product in it) run as a CustomJob on the local stack (issue 36): the control plane tells
the framework from its first lines, and its page and API show the steps (placed at every
third step once the checkpoints tell the interval), the loss, the evaluations, the
checkpoints and the total for the ETA; a resubmission from the first checkpoint passes
`--resume_from_checkpoint` and the new job goes on from there."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
SCRIPT = (Path(__file__).parent / "own_frameworks" / "hf_trainer_script.py").read_text()


def test_an_hf_trainer_job_is_followed_and_resumed_from_a_chosen_checkpoint(
        stack: Stack, api: Api) -> None:
    response = api.post("/api/v1/jobs/", {
        "name": "own-hf", "command": ["python", "-c", SCRIPT], "args": [],
        "chief": {"machine_type": "n1-standard-4"}})
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=240,
                       what="the HF Trainer job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    events = api.events_through(job_id)
    steps = api.steps_through(job_id, 12)
    assert [s["step"] for s in steps] == [3, 6, 9, 12]
    assert all(s["loss"] is not None and 3.0 < s["loss"] < 5.0 for s in steps)
    kinds = [(e["kind"], e["step"]) for e in events
             if e["kind"] in ("eval", "checkpoint_saved", "run_finished")]
    assert kinds == [("eval", 6), ("checkpoint_saved", 6), ("eval", 12),
                     ("checkpoint_saved", 12), ("run_finished", 12)]
    record = api.get(f"/api/v1/jobs/{job_id}/")
    assert [c["step"] for c in record["checkpoints"]] == [12, 6]
    assert record["total_steps"] == 12 and record["last_step"] == 12

    resubmitted = api.post(f"/api/v1/jobs/{job_id}/resubmit/", {"checkpoint_step": 6})
    assert resubmitted.status_code == 201, resubmitted.text
    again = resubmitted.json()
    assert again["request"]["args"][:1] == ["--resume_from_checkpoint"]
    done = api.wait_for(again["id"], lambda j: j["state"] in TERMINAL, timeout_s=240,
                        what="the resumed job to end", stack=stack)
    assert done["state"] == "SUCCEEDED", done["error_message"]
    resumed_events = api.events_through(again["id"])
    resumed = [e for e in resumed_events if e["kind"] == "resumed"]
    assert [e["step"] for e in resumed] == [6]
    # The first step line after the checkpoint: 9, counted from the step it resumed at.
    assert [s["step"] for s in api.steps_through(again["id"], 12)] == [9, 12]
