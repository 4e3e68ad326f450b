"""Teams' own Hugging Face Trainer and PyTorch Lightning scripts (tests/integration/
own_frameworks/, no line of the product in them) run as CustomJobs on the local stack, side by
side (issue 36): the control plane tells each framework from its first lines, and the API
shows the steps (the Trainer's placed at every third step once its checkpoints tell the
interval), the loss, the evaluations, the checkpoints, the end and the total for the ETA; a
resubmission of the Trainer job from its first checkpoint passes `--resume_from_checkpoint`
and the new job goes on from there."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
SCRIPTS = Path(__file__).parent / "own_frameworks"
SCRIPT = (SCRIPTS / "hf_trainer_script.py").read_text()
LIGHTNING = (SCRIPTS / "lightning_script.py").read_text()


def test_an_hf_trainer_job_is_followed_and_resumed_from_a_chosen_checkpoint(
        stack: Stack, api: Api) -> None:
    submitted = []
    for name, script in (("own-hf", SCRIPT), ("own-lightning", LIGHTNING)):
        response = api.post("/api/v1/jobs/", {
            "name": name, "command": ["python", "-c", script], "args": [],
            "chief": {"machine_type": "n1-standard-4"}})
        assert response.status_code == 201, response.text
        submitted.append(response.json()["id"])
    job_id, lightning_id = submitted
    for each in submitted:
        job = api.wait_for(each, lambda j: j["state"] in TERMINAL, timeout_s=240,
                           what=f"job {each} to end", stack=stack)
        assert job["state"] == "SUCCEEDED", job["error_message"]

    # Lightning: a step for each of the bar's counts (estimated from epoch x batches), with
    # the loss its bar shows; ModelCheckpoint's lines; the fit's last line as the end.
    lightning_events = api.events_through(lightning_id)
    lightning_steps = api.steps_through(lightning_id, 12)
    assert [s["step"] for s in lightning_steps] == list(range(1, 13))
    assert all(s["loss"] is not None for s in lightning_steps)
    assert [(e["kind"], e["step"]) for e in lightning_events
            if e["kind"] in ("checkpoint_saved", "run_finished")] == [
        ("checkpoint_saved", 6), ("checkpoint_saved", 12), ("run_finished", 12)]
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
