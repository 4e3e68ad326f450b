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

Beside them run the same four scripts with the callbacks' lines added
(own_frameworks/with_callbacks.py), shipped as a team ships them to Vertex: the scripts as the
modules of a training package, with the vcp-callbacks wheel (`pip wheel ./callbacks`) among the
job's package URIs, which Vertex's executor image pip-installs and the emulator puts first on
the replicas' PYTHONPATH (localvertex/replicas/python_packages.py). They give exact totals, the
callbacks' own steps and, on two replicas, each rank's own step times (the events API's
rank_step_times, what straggler detection reads).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config.devstack import Stack
from tests import make_env
from tests.integration.own_frameworks import with_callbacks
from tests.sdists import write_sdist
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


# The callbacks' jobs: the module of the training package each runs, the script's text with the
# callbacks, and its replicas. Two where a script joins a world from Vertex's RANK, WORLD_SIZE
# and MASTER_ADDR (the Trainer and Accelerate through Accelerate's state, DeepSpeed through its
# engine; gloo on the CPU): every third step then carries both ranks' own times. Lightning's
# fit stays on one: it takes a node's rank from NODE_RANK, which Vertex does not set, so two
# replicas would each train as node 0 (its rank times are its world of one).
CALLBACK_JOBS = {
    "own-hf": ("hf_trainer", with_callbacks.hf_trainer, 2),
    "own-lightning": ("lightning_fit", with_callbacks.lightning, 1),
    "own-accelerate": ("accelerate_loop", with_callbacks.accelerate, 2),
    "own-deepspeed": ("deepspeed_loop", with_callbacks.deepspeed, 2),
}
PACKAGES = "gs://cp-pkgs/own-callbacks"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-4.py310:latest"


def _callbacks_wheel(folder: Path, scratch: Path) -> str:
    """vcp-callbacks built into FOLDER as a team builds it for its job (`pip wheel
    ./callbacks`), from a copy in SCRATCH: pip builds in the source tree, which is shared."""
    source = scratch / "callbacks"
    shutil.copytree(Path(__file__).parents[2] / "callbacks", source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--wheel-dir", str(folder),
                    str(source)], check=True, capture_output=True, timeout=120)
    [wheel] = folder.glob("vcp_callbacks-*.whl")
    return wheel.name


def _training_package(path: Path) -> None:
    """The team's training package (an sdist): each script, with its callbacks, a module."""
    files = {"ownjobs-0.1/setup.py": "from setuptools import setup\nsetup()\n",
             "ownjobs-0.1/ownjobs/__init__.py": ""}
    for module, script, replicas in CALLBACK_JOBS.values():
        files[f"ownjobs-0.1/ownjobs/{module}.py"] = script(rank_times_every=3) + (
            with_callbacks.EXIT if replicas > 1 else "")
    write_sdist(path, files)


@pytest.fixture(scope="module")
def callback_jobs(stack: Stack, api: Api, tmp_path_factory: pytest.TempPathFactory
                  ) -> dict[str, int]:
    """The callbacks' jobs, submitted: their ids by the name of the job without them."""
    folder = stack.emulator_data_dir / "gcs" / PACKAGES.removeprefix("gs://")
    folder.mkdir(parents=True, exist_ok=True)
    wheel = _callbacks_wheel(folder, tmp_path_factory.mktemp("vcp-callbacks"))
    _training_package(folder / "ownjobs-0.1.tar.gz")
    ids = {}
    for name, (module, _, replicas) in CALLBACK_JOBS.items():
        request = {
            "name": f"{name}-callbacks", "args": [], "chief": {"machine_type": "n1-standard-4"},
            "python_package": {"executor_image_uri": EXECUTOR, "python_module": f"ownjobs.{module}",
                               "package_uris": [f"{PACKAGES}/ownjobs-0.1.tar.gz",
                                                f"{PACKAGES}/{wheel}"]},
            **EXTRA.get(name, {})}
        if replicas > 1:
            request["workers"] = {"machine_type": "n1-standard-4", "replica_count": replicas - 1}
        response = api.post("/api/v1/jobs/", request)
        assert response.status_code == 201, response.text
        ids[name] = response.json()["id"]
    return ids


def test_own_framework_jobs_are_followed_and_resumed_from_a_chosen_checkpoint(
        stack: Stack, api: Api, callback_jobs: dict[str, int]) -> None:
    # callback_jobs: the callbacks' jobs, submitted first, run beside these.
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


def test_the_same_jobs_with_the_callbacks_give_exact_totals_and_rank_times(
        stack: Stack, api: Api, callback_jobs: dict[str, int]) -> None:
    """Each callback job's steps are the callback's own (the Trainer's, Lightning's and the
    engine's every third step as they log; the loop's every step it logs), with the total the
    callback knows, the evaluations and checkpoints once each, the end; every third step both
    ranks' own step times (one for Lightning's world of one)."""
    every_step, logged = list(range(1, 13)), [3, 6, 9, 12]
    # The steps, the evaluations' steps, the learning rate (the Trainer's decays from its
    # default; the others' SGD keeps 0.05), each checkpoint's name as its framework makes it.
    expected = {
        "own-hf": (logged, [6, 12], None, "/checkpoint-{step}"),
        "own-lightning": (logged, [4, 8, 12], 0.05, "step={step}.ckpt"),
        "own-accelerate": (every_step, [6, 12], 0.05, "/step_{step}"),
        "own-deepspeed": (logged, [6, 12], 0.05, "/global_step{step}")}
    for name, job_id in callback_jobs.items():
        replicas = CALLBACK_JOBS[name][2]
        job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=240,
                           what=f"{name} to end", stack=stack)
        assert job["state"] == "SUCCEEDED", (name, job["error_message"])
        events = api.events_through(job_id)
        steps = api.steps_through(job_id, 12)
        want_steps, want_evals, lr, checkpoint_name = expected[name]
        assert [s["step"] for s in steps] == want_steps, name
        assert all(s["loss"] is not None and s["lr"] and s["lr"] == (lr or s["lr"])
                   for s in steps), (name, steps)
        record = api.get(f"/api/v1/jobs/{job_id}/")
        assert (record["last_step"], record["total_steps"]) == (12, 12), name
        assert [c["step"] for c in record["checkpoints"]] == [12, 6], name
        assert all(c["path"].rstrip("/").endswith(checkpoint_name.format(step=c["step"]))
                   for c in record["checkpoints"]), record["checkpoints"]
        started = [e for e in events if e["kind"] == "run_started"]
        assert started and all(e["data"]["reporter"] == "vcp-callbacks"
                               and e["data"]["world_size"] == replicas for e in started), name
        assert [e["step"] for e in events if e["kind"] == "eval"] == want_evals, name
        assert [e["step"] for e in events if e["kind"] == "checkpoint_saved"] == [6, 12], name
        assert [e["step"] for e in events if e["kind"] == "run_finished"] == [12], name
        rank_times = [e for e in events if e["kind"] == "rank_step_times"]
        assert [e["step"] for e in rank_times] == logged, name
        assert all(len(e["data"]["rank_step_time_s"]) == replicas
                   and all(t > 0 for t in e["data"]["rank_step_time_s"])
                   for e in rank_times), (name, rank_times)
