"""CustomJobs through Google's JobServiceClient: states, the replicas' environment, listing,
cancelling, deleting and validation."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    python_pool,
    wait_state,
    watch_states,
)

State = aiplatform_v1.JobState

# Each replica reports what Vertex told it, as one JSON line, then a text line and a stderr line.
REPORT_ENV = textwrap.dedent(
    """
    import json, os, sys, time
    keys = ["CLUSTER_SPEC", "TF_CONFIG", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR",
            "CLOUD_ML_JOB_ID", "CLOUD_ML_PROJECT_ID", "EXPANDED", "ESCAPED", "PYTHONUNBUFFERED"]
    env = {k: os.environ.get(k) for k in keys}
    print(json.dumps({"severity": "NOTICE", "message": "env", "env": env, "cwd": os.getcwd()}))
    print("plain text from " + os.environ["CLUSTER_SPEC"][:1])
    print("to stderr", file=sys.stderr)
    # The chief's exit ends the job: it waits (bounded) for the worker to have printed its lines,
    # which the worker says with a file in the job's working folder, shared by its replicas.
    if os.environ.get("RANK") == "0":
        deadline = time.monotonic() + 60
        while not os.path.exists("worker-printed") and time.monotonic() < deadline:
            time.sleep(0.02)
    else:
        open("worker-printed", "w").close()
    """
)


@pytest.fixture(scope="module")
def finished_job(emulator: EmulatorProcess):
    """A two-replica job that reports its environment, run to the end once for the module."""
    env = {"EXPANDED": "$(CLOUD_ML_JOB_ID)-x", "ESCAPED": "$$(CLOUD_ML_JOB_ID)"}
    created = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "env-report",
            [python_pool(REPORT_ENV, env=env), python_pool(REPORT_ENV, env=env)],
            base_output_directory={"output_uri_prefix": "gs://bucket/runs/env"},
            labels={"suite": "env"},
        ),
    )
    states, job = watch_states(emulator.jobs, created.name)
    logs = entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')
    return created, states, job, logs


def test_states_go_queued_pending_running_succeeded(finished_job) -> None:
    created, states, job, _ = finished_job
    assert created.state == State.JOB_STATE_QUEUED
    assert created.name == f"{PARENT}/customJobs/{job_id(created)}"
    assert job_id(created).isdigit()
    assert states == [
        State.JOB_STATE_QUEUED,
        State.JOB_STATE_PENDING,
        State.JOB_STATE_RUNNING,
        State.JOB_STATE_SUCCEEDED,
    ]
    assert job.create_time <= job.start_time <= job.end_time
    assert job.labels["suite"] == "env"
    assert job.display_name == "env-report"
    assert not job.error.code


def test_replicas_get_vertex_environment(finished_job, emulator: EmulatorProcess) -> None:
    _, _, job, logs = finished_job
    reports = {
        e.resource.labels["task_name"]: payload
        for e, payload in zip([e for e in logs if e.json_payload], json_entries(logs), strict=True)
    }
    assert set(reports) == {"workerpool0-0", "workerpool1-0"}
    chief, worker = reports["workerpool0-0"]["env"], reports["workerpool1-0"]["env"]

    spec = json.loads(chief["CLUSTER_SPEC"])
    cluster = spec["cluster"]
    assert set(cluster) == {"workerpool0", "workerpool1"}
    ports = {cluster["workerpool0"][0], cluster["workerpool1"][0]}
    assert len(ports) == 2 and all(p.startswith("127.0.0.1:") for p in ports)
    assert spec["environment"] == "cloud"
    assert spec["task"] == {"type": "workerpool0", "index": 0, "trial": ""}
    assert spec["job"]["worker_pool_specs"][0]["machine_spec"]["machine_type"] == "n1-standard-4"
    assert json.loads(worker["CLUSTER_SPEC"])["task"]["type"] == "workerpool1"
    assert json.loads(worker["TF_CONFIG"])["task"] == {"type": "worker", "index": 0}
    assert set(json.loads(worker["TF_CONFIG"])["cluster"]) == {"chief", "worker"}

    assert (chief["RANK"], worker["RANK"]) == ("0", "1")
    assert chief["WORLD_SIZE"] == worker["WORLD_SIZE"] == "2"
    assert chief["MASTER_ADDR"] == "127.0.0.1"
    assert chief["MASTER_PORT"] == worker["MASTER_PORT"] == cluster["workerpool0"][0].split(":")[1]
    base = f"{emulator.data_dir.absolute()}/gcs/bucket/runs/env"
    assert chief["AIP_CHECKPOINT_DIR"] == worker["AIP_CHECKPOINT_DIR"] == f"{base}/checkpoints/"
    assert chief["AIP_MODEL_DIR"] == f"{base}/model/"
    assert chief["AIP_TENSORBOARD_LOG_DIR"] == f"{base}/logs/"
    assert Path(chief["AIP_CHECKPOINT_DIR"]).is_dir()
    assert chief["CLOUD_ML_JOB_ID"] == job_id(job)
    assert chief["CLOUD_ML_PROJECT_ID"] == PROJECT
    assert chief["EXPANDED"] == f"{job_id(job)}-x"
    assert chief["ESCAPED"] == "$(CLOUD_ML_JOB_ID)"
    assert chief["PYTHONUNBUFFERED"] == "1"
    # Each job runs in a folder of its own (the code it runs is found on PYTHONPATH).
    assert reports["workerpool0-0"]["cwd"].endswith(f"/work/{job_id(job)}")


def test_lines_become_log_entries(finished_job) -> None:
    _, _, job, logs = finished_job
    replica_logs = [e for e in logs if e.resource.labels.get("task_name") == "workerpool0-0"]
    by_kind = {
        "json": [e for e in replica_logs if e.json_payload],
        "text": [e for e in replica_logs if e.text_payload.startswith("plain text")],
        "stderr": [e for e in replica_logs if e.text_payload == "to stderr"],
    }
    assert all(len(v) == 1 for v in by_kind.values()), by_kind
    json_entry = by_kind["json"][0]
    assert json_entry.severity == 300  # NOTICE, lifted from the payload
    payload = json_entries([json_entry])[0]
    assert payload["message"] == "env" and "severity" not in payload
    assert by_kind["text"][0].severity == 200  # INFO: stdout
    assert by_kind["stderr"][0].severity == 500  # ERROR: stderr
    for e in replica_logs:
        assert e.log_name == f"projects/{PROJECT}/logs/workerpool0-0"
        assert e.resource.type == "ml_job"
        assert dict(e.resource.labels) == {
            "job_id": job_id(job),
            "task_name": "workerpool0-0",
            "project_id": PROJECT,
        }
    assert len({e.insert_id for e in logs}) == len(logs)
    keys = [(e.timestamp, e.insert_id) for e in logs]
    assert keys == sorted(keys)
    assert any(e.text_payload == "Job completed successfully." for e in logs)


def test_list_filters_paging_and_delete(emulator: EmulatorProcess) -> None:
    jobs = emulator.jobs
    made = []
    for n, team in enumerate(["red", "red", "blue"]):
        made.append(
            jobs.create_custom_job(
                parent=PARENT,
                custom_job=custom_job(
                    f"list-{n}", [python_pool("pass")], labels={"team": team, "suite": "list"}
                ),
            )
        )
    for job in made:
        wait_state(jobs, job.name, State.JOB_STATE_SUCCEEDED)

    def names(filter_: str, **request: object) -> list[str]:
        pager = jobs.list_custom_jobs(request={"parent": PARENT, "filter": filter_, **request})
        return [j.display_name for j in pager]

    assert names('labels.suite="list" AND labels.team="red"') == ["list-1", "list-0"]
    assert names("labels.suite=list AND labels.team=blue") == ["list-2"]
    assert names('display_name="list-1"') == ["list-1"]
    assert names('labels.suite="list" AND state="JOB_STATE_SUCCEEDED"') == [
        "list-2", "list-1", "list-0",
    ]  # fmt: skip
    assert names("labels.suite=list AND state=JOB_STATE_RUNNING") == []
    pages = list(
        jobs.list_custom_jobs(
            request={"parent": PARENT, "filter": "labels.suite=list", "page_size": 2}
        ).pages
    )
    assert [len(p.custom_jobs) for p in pages] == [2, 1]
    with pytest.raises(exceptions.InvalidArgument, match="colour"):
        names('colour="red"')

    operation = jobs.delete_custom_job(name=made[0].name)
    operation.result(timeout=5)
    assert operation.done()
    with pytest.raises(exceptions.NotFound):
        jobs.get_custom_job(name=made[0].name)
    assert names("labels.suite=list") == ["list-2", "list-1"]


def test_a_page_token_is_bound_to_its_collection_parent_and_filter(
    emulator: EmulatorProcess,
) -> None:
    jobs = emulator.jobs
    made = [jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        f"token-{n}", [python_pool("pass")], labels={"suite": "token"})) for n in range(3)]
    for job in made:
        wait_state(jobs, job.name, State.JOB_STATE_SUCCEEDED)
    request = {"parent": PARENT, "filter": "labels.suite=token", "page_size": 1}
    first = next(iter(jobs.list_custom_jobs(request=request).pages))
    assert [j.display_name for j in first.custom_jobs] == ["token-2"]
    second = jobs.list_custom_jobs(request={**request, "page_token": first.next_page_token})
    assert next(iter(second)).display_name == "token-1"
    for other in ({**request, "filter": "labels.suite=other"},
                  {**request, "parent": "projects/other/locations/us-central1"}):
        with pytest.raises(exceptions.InvalidArgument, match="does not match"):
            list(jobs.list_custom_jobs(request={**other, "page_token": first.next_page_token}))
    with pytest.raises(exceptions.InvalidArgument, match="does not match"):
        list(jobs.list_hyperparameter_tuning_jobs(
            request={**request, "page_token": first.next_page_token}))
    with pytest.raises(exceptions.InvalidArgument, match="Invalid page_token"):
        list(jobs.list_custom_jobs(request={**request, "page_token": "not-a-token"}))


def test_cancel_a_running_job(emulator: EmulatorProcess) -> None:
    jobs = emulator.jobs
    job = jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job("cancel-me", [python_pool("import time; time.sleep(60)")]),
    )
    wait_state(jobs, job.name, State.JOB_STATE_RUNNING)
    with pytest.raises(exceptions.FailedPrecondition):
        jobs.delete_custom_job(name=job.name)
    jobs.cancel_custom_job(name=job.name)
    assert jobs.get_custom_job(name=job.name).state in (
        State.JOB_STATE_CANCELLING,
        State.JOB_STATE_CANCELLED,
    )
    done = wait_state(jobs, job.name, State.JOB_STATE_CANCELLED, timeout=10)
    assert (done.error.code, done.error.message) == (1, "CANCELED")
    assert done.end_time
    with pytest.raises(exceptions.FailedPrecondition):
        jobs.cancel_custom_job(name=job.name)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda j: setattr(j, "display_name", ""), "display_name"),
        (lambda j: j.job_spec.worker_pool_specs.clear(), "worker_pool_specs"),
        (lambda j: setattr(j.job_spec.worker_pool_specs[0].machine_spec, "machine_type", ""),
         "machine_type"),
        (lambda j: setattr(j.job_spec.worker_pool_specs[0].container_spec, "image_uri", ""),
         "image_uri"),
        (lambda j: j.labels.update({"Bad Key": "x"}), "labels"),
    ],
)  # fmt: skip
def test_invalid_jobs_are_refused(emulator: EmulatorProcess, change, field: str) -> None:
    job = custom_job("invalid", [python_pool("pass")])
    change(job)
    with pytest.raises(exceptions.InvalidArgument, match=field):
        emulator.jobs.create_custom_job(parent=PARENT, custom_job=job)
    with pytest.raises(exceptions.InvalidArgument):
        emulator.jobs.create_custom_job(parent="projects/p", custom_job=job)


def test_unknown_job_is_not_found(emulator: EmulatorProcess) -> None:
    with pytest.raises(exceptions.NotFound):
        emulator.jobs.get_custom_job(name=f"{PARENT}/customJobs/1")
    with pytest.raises(exceptions.NotFound):
        emulator.jobs.cancel_custom_job(name=f"{PARENT}/customJobs/1")
