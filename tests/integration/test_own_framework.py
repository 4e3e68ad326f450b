"""Teams' own Hugging Face Trainer, PyTorch Lightning, Accelerate and DeepSpeed scripts
(tests/integration/own_frameworks/, no line of the product in them) run as CustomJobs on the
local stack, side by side (issue 36): the control plane tells each framework from its first
lines (the Accelerate loop's from the Accelerator's state it logs first, as transformers'
*_no_trainer.py examples do), and the API shows the steps (the Trainer's placed at every third
step once its checkpoints tell the interval; the loops' from their tqdm bars), the loss, the
evaluations, the checkpoints, the end and the total for the ETA; a resubmission of the
Trainer, Accelerate and DeepSpeed jobs from their step-6 checkpoint passes
`--resume_from_checkpoint` and each new job goes on from there.

The DeepSpeed job's engine needs DeepSpeed's CPU communication op: the emulator gives the job
a copy of the environment's prebuilt one (`make ds-ops`, part of `make envs`; built here if
missing, once), as a team's image ships its ops built (localvertex/replicas/torch_extensions.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from config.devstack import Stack
from tests import make_env
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
SCRIPTS = Path(__file__).parent / "own_frameworks"
SCRIPT = (SCRIPTS / "hf_trainer_script.py").read_text()
LIGHTNING = (SCRIPTS / "lightning_script.py").read_text()
ACCELERATE = (SCRIPTS / "accelerate_script.py").read_text()
DEEPSPEED = (SCRIPTS / "deepspeed_script.py").read_text()
# What a job's request adds: the DeepSpeed engine is one process per replica, which Vertex
# gives RANK and WORLD_SIZE but not the LOCAL_RANK a launcher (torchrun, deepspeed) would set
# and DeepSpeed requires.
EXTRA = {"own-deepspeed": {"env": {"LOCAL_RANK": "0"}}}


@pytest.fixture(scope="module", autouse=True)
def prebuilt_deepspeed_op() -> None:
    """`make ds-ops` (part of `make envs`, which `make test` runs first): a no-op when built."""
    make_env.build("ds-ops", timeout_s=900)


def test_own_framework_jobs_are_followed_and_resumed_from_a_chosen_checkpoint(
        stack: Stack, api: Api) -> None:
    submitted = []
    for name, script in (("own-hf", SCRIPT), ("own-lightning", LIGHTNING),
                         ("own-accelerate", ACCELERATE), ("own-deepspeed", DEEPSPEED)):
        response = api.post("/api/v1/jobs/", {
            "name": name, "command": ["python", "-c", script], "args": [],
            "chief": {"machine_type": "n1-standard-4"}, **EXTRA.get(name, {})})
        assert response.status_code == 201, response.text
        submitted.append(response.json()["id"])
    job_id, lightning_id, accelerate_id, deepspeed_id = submitted
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
    # The Trainer writes its eval dict on stdout and its checkpoint line on stderr, which reach
    # the log as two streams: at one step, either may come first.
    assert sorted(kinds) == sorted([("eval", 6), ("checkpoint_saved", 6), ("eval", 12),
                                    ("checkpoint_saved", 12), ("run_finished", 12)])
    record = api.get(f"/api/v1/jobs/{job_id}/")
    assert [c["step"] for c in record["checkpoints"]] == [12, 6]
    assert record["total_steps"] == 12 and record["last_step"] == 12

    # The Accelerate loop and the DeepSpeed engine: every step of their bars with its loss,
    # their total; the evaluations they log, their checkpoints (save_state's step_N folder,
    # the engine's global_stepN tag folder), the bar's end.
    loops = {}
    for each, folder in ((accelerate_id, "step_"), (deepspeed_id, "global_step")):
        loop_events = api.events_through(each)
        loop_steps = api.steps_through(each, 12)
        assert [s["step"] for s in loop_steps] == list(range(1, 13)), each
        assert all(s["loss"] is not None for s in loop_steps), each
        assert [(e["kind"], e["step"]) for e in loop_events
                if e["kind"] in ("eval", "checkpoint_saved", "run_finished")] == [
            ("eval", 6), ("checkpoint_saved", 6), ("eval", 12), ("checkpoint_saved", 12),
            ("run_finished", 12)], each
        record = api.get(f"/api/v1/jobs/{each}/")
        assert [c["step"] for c in record["checkpoints"]] == [12, 6], each
        assert all(c["path"].rstrip("/").endswith(f"/{folder}{c['step']}")
                   for c in record["checkpoints"]), record["checkpoints"]
        assert record["total_steps"] == 12 and record["last_step"] == 12, each
        loops[each] = loop_steps
    # The engine's own step line (every third step) gives the bar's step its learning rate.
    assert [s["step"] for s in loops[deepspeed_id] if s["lr"] == 0.05] == [3, 6, 9, 12]

    # From the checkpoint of step 6, all three side by side.
    resumed_jobs = []
    for each in (job_id, accelerate_id, deepspeed_id):
        resubmitted = api.post(f"/api/v1/jobs/{each}/resubmit/", {"checkpoint_step": 6})
        assert resubmitted.status_code == 201, resubmitted.text
        again = resubmitted.json()
        assert again["request"]["args"][:1] == ["--resume_from_checkpoint"]
        resumed_jobs.append(again["id"])
    for again_id in resumed_jobs:
        done = api.wait_for(again_id, lambda j: j["state"] in TERMINAL, timeout_s=240,
                            what="the resumed job to end", stack=stack)
        assert done["state"] == "SUCCEEDED", done["error_message"]
        resumed = [e for e in api.events_through(again_id) if e["kind"] == "resumed"]
        assert [e["step"] for e in resumed] == [6], again_id
    hf_again, accelerate_again, deepspeed_again = resumed_jobs
    # The first step line after the checkpoint: 9, counted from the step it resumed at.
    assert [s["step"] for s in api.steps_through(hf_again, 12)] == [9, 12]
    # The loops' bars count on from the step they loaded: 7 first.
    for again_id in (accelerate_again, deepspeed_again):
        assert [s["step"] for s in api.steps_through(again_id, 12)] == list(range(7, 13))
