"""Synthetic mode (localvertex/jobs/synthetic_replicas.py) through the emulator's gRPC API: a few
dozen jobs whose replicas are timers end, are preempted and fail as their schedules say, move
through Vertex's states as real replicas do, and print lines the contract reads."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from google.cloud.logging_v2.types import LogEntry
from google.protobuf import json_format

from contract import events as contract_events
from localvertex.jobs import synthetic_schedule
from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    TERMINAL,
    EmulatorProcess,
    custom_job,
    job_id,
    wait_for,
    wait_state,
)

State = aiplatform_v1.JobState
SEED = 7


def pool(schedule: str | None, replicas: int = 1) -> dict:
    env = [] if schedule is None else [{"name": synthetic_schedule.ENV_NAME, "value": schedule}]
    return {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": replicas,
            # Never run: in synthetic mode nothing is started.
            "container_spec": {"image_uri": "us-docker.pkg.dev/test/trainer:1",
                               "command": ["/no/such/trainer"], "env": env}}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> EmulatorProcess:
    from tests.localvertex.helpers import FAST_FLAGS

    emu = EmulatorProcess(tmp_path_factory.mktemp("synthetic") / "data", [
        *FAST_FLAGS, "--logging-quota-per-minute", "0", "--synthetic",
        "--synthetic-seed", str(SEED), "--synthetic-step-s", "0.01"])
    emu.start()
    yield emu
    emu.stop()


def create(emu: EmulatorProcess, name: str, pools: list[dict], **spec: object):
    return emu.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(name, pools, **spec))


def chief_lines(emu: EmulatorProcess) -> dict[str, list[dict]]:
    """Every replica's JSON lines by job id, in order, each checked against the contract."""
    by_job: dict[str, list[dict]] = defaultdict(list)
    for entry in emu.logs.list_log_entries(request={
            "resource_names": [f"projects/{PROJECT}"], "page_size": 1000,
            "filter": 'resource.type="ml_job" AND resource.labels.task_name="workerpool0-0"'}):
        pb = LogEntry.pb(entry)
        if not pb.HasField("json_payload"):
            continue
        record = json_format.MessageToDict(pb.json_payload)
        assert contract_events.validate(record) == [], record
        by_job[pb.resource.labels["job_id"]].append(record)
    return by_job


def service_texts(emu: EmulatorProcess, job) -> list[str]:
    return [e.text_payload for e in emu.logs.list_log_entries(request={
        "resource_names": [f"projects/{PROJECT}"],
        "filter": f'resource.labels.job_id="{job_id(job)}" AND logName:"localvertex"'})]


def test_schedules_end_preempt_and_fail_as_given(synthetic: EmulatorProcess) -> None:
    out = {"base_output_directory": {"output_uri_prefix": "gs://team-a/synthetic"}}
    kinds = {
        "ends": ("steps=5;step_s=0.05", 10),
        "preempted": ("steps=6;step_s=0.05;checkpoint_every=2;preempt_at=3", 8),
        "fails": ("steps=10;step_s=0.05;fail_at=2", 6),
        "fails-once": ("steps=4;step_s=0.05;fail_at=2;fails=1", 6),
    }
    jobs: dict[str, list] = {kind: [create(synthetic, f"{kind}-{i}", [pool(text)], **out)
                                    for i in range(n)] for kind, (text, n) in kinds.items()}
    # A chief and two workers; and schedules drawn from the seed (the emulator's 0.01 s steps).
    jobs["pools"] = [create(synthetic, "pools", [pool("steps=4;step_s=0.05"), pool(None, 2)])]
    jobs["drawn"] = [create(synthetic, f"drawn-{i}", [pool(None)], **out) for i in range(6)]
    jobs["cancelled"] = [create(synthetic, "cancelled", [pool("steps=100000")])]
    cancelled = jobs["cancelled"][0]
    wait_state(synthetic.jobs, cancelled.name, State.JOB_STATE_RUNNING)
    synthetic.jobs.cancel_custom_job(name=cancelled.name)

    everyone = [job for group in jobs.values() for job in group]
    names = {job.name for job in everyone}

    def ended() -> dict[str, aiplatform_v1.CustomJob]:
        listed = {j.name: j for j in synthetic.jobs.list_custom_jobs(parent=PARENT)
                  if j.name in names}
        return listed if all(j.state in TERMINAL for j in listed.values()) else {}

    final = wait_for(ended, timeout=60, interval=0.2)
    lines = chief_lines(synthetic)

    def steps(job) -> list[int]:
        return [int(r["step"]) for r in lines[job_id(job)] if r["event"] == "step"]

    def events(job) -> list[str]:
        return [r["event"] for r in lines[job_id(job)]]

    for job in jobs["ends"]:
        assert final[job.name].state == State.JOB_STATE_SUCCEEDED
        assert steps(job) == [1, 2, 3, 4, 5]
        assert events(job)[0] == "run_started" and events(job)[-1] == "run_finished"
        step = next(r for r in lines[job_id(job)] if r["event"] == "step")
        assert set(contract_events.STEP_VALUES) <= set(step)
    for job in jobs["preempted"]:
        assert final[job.name].state == State.JOB_STATE_SUCCEEDED
        # Stopped at step 3 it saved and said so (SIGTERM), and resumed from there.
        assert steps(job) == [1, 2, 3, 4, 5, 6]
        assert events(job).count("preempted") == 1 and events(job).count("run_started") == 2
        resumed = next(r for r in lines[job_id(job)] if r["event"] == "resumed")
        assert int(resumed["step"]) == 3 and resumed["path"].endswith("/step-3")
        assert any("Spot VM preempted (preemption 1)" in t for t in service_texts(synthetic, job))
    for job in jobs["fails"]:
        # Failed at step 2 three times (FAST_FLAGS: two restarts), then the job failed.
        assert final[job.name].state == State.JOB_STATE_FAILED
        assert "exited with a non-zero status of 1 after 2 restarts" in \
            final[job.name].error.message
        assert events(job).count("error") == 3 and steps(job) == [1, 2, 1, 2, 1, 2]
    for job in jobs["fails-once"]:
        assert final[job.name].state == State.JOB_STATE_SUCCEEDED
        assert events(job).count("error") == 1 and steps(job)[-1] == 4
    assert final[jobs["pools"][0].name].state == State.JOB_STATE_SUCCEEDED
    assert final[cancelled.name].state == State.JOB_STATE_CANCELLED
    assert events(cancelled)[-1] == "preempted"  # SIGTERM, as a trainer takes a cancel

    for job in jobs["drawn"]:
        drawn = synthetic_schedule.for_job(job.job_spec, job_id(job), SEED, 0.01)
        failed_for_good = drawn.fail_at is not None
        assert final[job.name].state == (State.JOB_STATE_FAILED if failed_for_good
                                         else State.JOB_STATE_SUCCEEDED), drawn
        if not failed_for_good:
            assert max(steps(job)) == drawn.steps
        assert events(job).count("preempted") == len(drawn.preempt_at) or failed_for_good


def test_workers_print_their_own_run_started(synthetic: EmulatorProcess) -> None:
    job = create(synthetic, "ranks", [pool("steps=2;step_s=0.05"), pool(None, 2)])
    wait_state(synthetic.jobs, job.name, State.JOB_STATE_SUCCEEDED, timeout=30)
    ranks = set()
    for entry in synthetic.logs.list_log_entries(request={
            "resource_names": [f"projects/{PROJECT}"],
            "filter": f'resource.labels.job_id="{job_id(job)}" AND jsonPayload.event="run_started"'
    }):
        payload = json_format.MessageToDict(LogEntry.pb(entry).json_payload)
        assert contract_events.validate(payload) == []
        ranks.add(int(payload["rank"]))
        assert int(payload["world_size"]) == 3
    assert ranks == {0, 1, 2}


@pytest.mark.parametrize(("schedule", "named"), [
    ("steps=0", "steps='0' must be a whole number of 1 to 1000000"),
    ("steps=10;preempt_at=10", "preempt_at='10' must be up to 100 steps of 1 to 9"),
    ("steps=10;speed=3", "unknown key 'speed'"),
    ("step_s=0.1", "steps is required"),
])
def test_a_schedule_that_cannot_be_read_is_refused(synthetic: EmulatorProcess, schedule: str,
                                                   named: str) -> None:
    before = len(list(synthetic.jobs.list_custom_jobs(parent=PARENT)))
    with pytest.raises(exceptions.InvalidArgument) as raised:
        create(synthetic, "bad", [pool(schedule)])
    assert synthetic_schedule.ENV_NAME in str(raised.value) and named in str(raised.value)
    assert len(list(synthetic.jobs.list_custom_jobs(parent=PARENT))) == before


def test_the_same_seed_draws_the_same_schedule() -> None:
    spec = aiplatform_v1.CustomJobSpec.pb()()
    first = synthetic_schedule.for_job(spec, "42", seed=3, step_s=1.0)
    assert first == synthetic_schedule.for_job(spec, "42", seed=3, step_s=1.0)
    drawn = [synthetic_schedule.for_job(spec, str(i), seed=3, step_s=1.0) for i in range(400)]
    assert 20 < sum(bool(d.preempt_at) for d in drawn) < 70  # PREEMPT_P = 0.1
    assert json.dumps(sorted({d.steps for d in drawn})) != "[]"
