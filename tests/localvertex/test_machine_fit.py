"""The emulator's machine-sized guard (localvertex/jobs/machine_fit.py): the floor of what a
job's trainer replicas hold, the decision against the machine, and, through Google's client, a
full-size Llama-3-8B preset failing before any replica starts while its scaled-down variant
runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from localvertex.__main__ import ENV_MACHINE_MEMORY, parse_args
from localvertex.config import REPO_ROOT, Settings
from localvertex.jobs import machine_fit
from tests.localvertex.helpers import (
    PARENT,
    custom_job,
    python_pool,
    wait_state,
    watch_states,
)
from vertexplan import presets
from vertexplan.composer import JobRequest, compose

State = aiplatform_v1.JobState
LLAMA_8B = "llama3-8b-tp2-fsdp4-a100"
GPT_7B = ["--preset", "small", "--set", "model.n_layer=32", "--set", "model.n_embd=4096",
          "--set", "model.n_head=32", "--set", "model.block_size=2048"]


def settings(machine_gib: float | None = None, headroom_gib: float | None = 0.0) -> Settings:
    return Settings(data_dir=Path("/nonexistent"), machine_memory_gib=machine_gib,
                    memory_headroom_gib=headroom_gib)


def preset_job(request: dict) -> aiplatform_v1.CustomJob:
    """The CustomJob the control plane submits for a request (the composer's REST JSON)."""
    composed = compose(JobRequest.from_dict(request))
    assert not composed.errors, composed.errors
    job = aiplatform_v1.CustomJob()
    json_format.ParseDict({"displayName": request["name"], "jobSpec":
                           composed.custom_job["jobSpec"]},
                          aiplatform_v1.CustomJob.pb(job))
    return job


def trainer_job(args: list[str], replicas: int = 1) -> aiplatform_v1.CustomJob:
    pool = python_pool("")
    pool["container_spec"]["command"] = ["python", "-m", "trainers.train"]
    pool["container_spec"]["args"] = args
    pool["replica_count"] = replicas
    return custom_job("trainer", [pool])


# -- the estimate ------------------------------------------------------------------------------

def test_a_shipped_shape_counts_its_published_parameters() -> None:
    shapes = REPO_ROOT / machine_fit.SHAPES_DIR
    llama = json.loads((shapes / "llama-3-8b.json").read_text())
    # What the preset's model section says the trainer builds (transformers' own count).
    assert machine_fit.hf_parameters(llama) == presets.get(LLAMA_8B).request["model"][
        "parameters"] == 8_030_261_248
    # Gemma ties its embeddings and names a head_dim that is not width / heads: 2.51B.
    gemma = json.loads((shapes / "gemma-2b.json").read_text())
    assert machine_fit.hf_parameters(gemma) == 2_506_172_416


def test_the_strategy_divides_the_states_as_it_shards_them() -> None:
    p = 1_000_000
    per = machine_fit.state_bytes_per_process
    assert per(p, "ddp", 8, 1, 1, 8) == 16 * p
    assert per(p, "full_shard", 8, 1, 1, 8) == 16 * p / 8
    assert per(p, "zero2", 8, 1, 1, 8) == 4 * p + 12 * p / 8
    assert per(p, "zero1", 8, 1, 1, 8) == 8 * p + 8 * p / 8
    # Tensor parallel 2 halves each rank's parameters; FSDP shards the rest over dp = 4.
    assert per(p, "full_shard", 8, 2, 1, 8) == 16 * p / 2 / 4
    assert per(p, "hybrid_shard", 16, 1, 1, 8) == 16 * p / 8
    assert per(p, "no-such-strategy", 8, 1, 1, 8) is None


def test_the_8b_preset_is_estimated_per_replica_and_process() -> None:
    found = machine_fit.estimate(settings(), preset_job(presets.get(LLAMA_8B).job_request())
                                 .job_spec)
    assert found is not None and found.processes == 8 and found.strategy == "full_shard"
    [pool] = found.pools
    per_process = 8_030_261_248 * 16 / 2 / 4 / machine_fit.GIB + machine_fit.PROCESS_BASE_GIB
    assert (pool.replicas, pool.processes) == (1, 8)
    assert pool.per_process_gib == pytest.approx(per_process)
    assert found.total_gib == pytest.approx(8 * per_process)


def test_a_job_of_unknown_memory_is_never_refused() -> None:
    tiny = settings(machine_gib=0.01)
    own = custom_job("own", [python_pool("print('a team's own code')", replicas=64)])
    assert machine_fit.refusal(tiny, own.job_spec) is None
    # A config.json of the team's (a path, gs://) or weights to start from: not read here.
    for args in (["--model-config", "/data/config.json"], ["--model-config", "../../etc/x"],
                 ["--model-config", "gs://b/config.json"], ["--init-from", "gs://b/w"],
                 ["--model-config", "no-such-shape"], ["--preset", "huge"]):
        assert machine_fit.estimate(tiny, trainer_job(args).job_spec) is None, args
    # Hostile or odd values read as absent, never as an error of the emulator's.
    odd = machine_fit.estimate(tiny, trainer_job(
        ["--nproc-per-node", "\u00b2", "--compile-blocks", *GPT_7B, "--set", "tp=-1"]).job_spec)
    assert odd is not None and odd.processes == 1 and odd.model.parameters > 6e9
    # A trainer pool beside one of unknown code: the job as a whole is unknown.
    job = trainer_job(GPT_7B)
    job.job_spec.worker_pool_specs.append(
        custom_job("x", [python_pool("pass")]).job_spec.worker_pool_specs[0])
    assert machine_fit.estimate(tiny, job.job_spec) is None


def test_the_refusal_names_the_figures_and_the_scaled_down_way() -> None:
    machine = settings(machine_gib=16.0, headroom_gib=1.5)
    message = machine_fit.refusal(machine, preset_job(
        presets.get(LLAMA_8B).job_request()).job_spec)
    assert message is not None
    for figure in ("121.7 GB in all", "workerpool0: 1 replica x 121.7 GB",
                   "8 processes x 15.2 GB", "8 trainer processes of llama-3-8b",
                   "8.03B parameters", "the machine has 16.0 GB, 14.5 GB for jobs after a "
                   "1.5 GB headroom", "No replica was started",
                   "--model-config llama-3-8b-scaled", "--scale-down"):
        assert figure in message, (figure, message)
    # The control plane reads it as a configuration failure, not a stockout to retry.
    assert "stockout" not in message.lower() and "capacity" not in message.lower()
    assert machine_fit.refusal(machine, preset_job(
        presets.get(LLAMA_8B).scaled_down()).job_spec) is None
    # The 7B-shaped GPT, two replicas: its way down is the tiny preset.
    gpt = machine_fit.refusal(machine, trainer_job(GPT_7B, replicas=2).job_spec)
    assert gpt is not None and "2 replicas x " in gpt and "--preset tiny" in gpt


def test_the_machine_and_its_headroom() -> None:
    assert machine_fit.headroom_gib(settings(headroom_gib=None), 24.0) == pytest.approx(2.4)
    assert machine_fit.headroom_gib(settings(headroom_gib=None), 8.0) == 2.0
    assert machine_fit.machine_gib(settings(machine_gib=None)) > 0.5
    # A job that fits exactly what is left after the headroom runs.
    job = trainer_job(GPT_7B).job_spec
    total = machine_fit.estimate(settings(), job).total_gib
    assert machine_fit.refusal(settings(machine_gib=total + 1, headroom_gib=1), job) is None
    assert machine_fit.refusal(settings(machine_gib=total + 1, headroom_gib=1.01), job)


def test_the_machine_is_set_by_flag_or_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MACHINE_MEMORY, "12.5")
    assert parse_args(["--data-dir", "d"]).machine_memory_gb == 12.5
    assert parse_args(["--data-dir", "d", "--machine-memory-gb", "3"]).machine_memory_gb == 3
    monkeypatch.setenv(ENV_MACHINE_MEMORY, "lots")
    with pytest.raises(SystemExit, match=ENV_MACHINE_MEMORY):
        parse_args(["--data-dir", "d"])


# -- through the emulator ------------------------------------------------------------------------

@pytest.mark.slow
def test_a_job_bigger_than_the_machine_fails_at_once_and_its_variant_runs(
        start_emulator) -> None:
    emu = start_emulator("--machine-memory-gb", "16", "--memory-headroom-gb", "1")
    preset = presets.get(LLAMA_8B)
    big = emu.jobs.create_custom_job(parent=PARENT, custom_job=preset_job(preset.job_request()))
    assert big.state == State.JOB_STATE_QUEUED
    states, job = watch_states(emu.jobs, big.name)
    # Failed from QUEUED: never provisioned, never started.
    assert states[-1] == State.JOB_STATE_FAILED and not {
        State.JOB_STATE_PENDING, State.JOB_STATE_RUNNING} & set(states), states
    assert job.error.code == machine_fit.CODE_FAILED_PRECONDITION
    assert "121.7 GB in all" in job.error.message and "machine has 16.0 GB" in \
        job.error.message and "--model-config llama-3-8b-scaled" in job.error.message
    assert not job.start_time
    # The scaled-down variant is let through: its eight processes start (then it is cancelled:
    # tests/integration/test_presets_run.py trains it to the end on the stack).
    small = emu.jobs.create_custom_job(parent=PARENT,
                                       custom_job=preset_job(preset.scaled_down()))
    wait_state(emu.jobs, small.name, State.JOB_STATE_RUNNING)
    emu.jobs.cancel_custom_job(name=small.name)
    wait_state(emu.jobs, small.name, State.JOB_STATE_CANCELLED)
