"""The whole path the real way: REST API -> Celery worker on Redis -> the emulator over gRPC
-> trainer processes -> ListLogEntries -> events in PostgreSQL -> the job's page."""

from __future__ import annotations

import os
import re
import signal
import time
from datetime import datetime
from typing import Any

import pytest
import requests
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport

from config.devstack import Stack
from localvertex import auth
from tests.stacks import Api, after_worker_runs

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}


def ddp_job(name: str, steps: int, checkpoint_every: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "strategy": "ddp",
        "args": ["--preset", "tiny", "--steps", str(steps),
                 "--checkpoint-every", str(checkpoint_every)],
        "chief": {"machine_type": "n1-standard-4"},
        "workers": {"replica_count": 1},
        **extra,
    }


def emulator_jobs(stack: Stack) -> list[aiplatform_v1.CustomJob]:
    channel = auth.channel(f"127.0.0.1:{stack.config.emulator_port}", stack.emulator_token)
    client = aiplatform_v1.JobServiceClient(transport=JobServiceGrpcTransport(channel=channel))
    return list(client.list_custom_jobs(parent="projects/local-project/locations/us-central1"))


def browser_session(stack: Stack, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{stack.web_url}/login/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(f"{stack.web_url}/login/", timeout=10, data={
        "username": username, "password": password, "csrfmiddlewaretoken": token,
    }, headers={"Referer": f"{stack.web_url}/login/"})
    assert response.ok and "/login/" not in response.url, "login failed"
    return session


def test_job_trains_on_the_emulator_and_shows_on_its_page(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    response = api.post("/api/v1/jobs/", ddp_job("e2e-ddp", steps=120, checkpoint_every=40))
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    assert response.json()["state"] == "QUEUED"

    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]

    # Exactly one CustomJob, named deterministically, with the control plane's labels.
    mine = [j for j in emulator_jobs(stack) if j.labels.get("cp-job") == str(job_id)]
    assert [j.display_name for j in mine] == [f"cp-{job_id}-a1"]
    assert mine[0].labels["cp-team"] == seeded["team"]
    assert job["attempts"][0]["vertex_name"] == mine[0].name

    steps = api.steps_through(job_id, 120)
    numbers = [s["step"] for s in steps]
    assert numbers == list(range(1, 121)), "every step once, in order, from rank 0 only"
    assert steps[-1]["loss"] < steps[0]["loss"], "the model learned something"
    assert all(s["tokens_per_s"] > 0 and s["step_time_s"] > 0 for s in steps)

    events = api.events_through(job_id)
    kinds = [e["kind"] for e in events]
    started = {e["replica"] for e in events if e["kind"] == "run_started"}
    assert started == {"workerpool0-0", "workerpool1-0"}, "every rank reports run_started"
    checkpoints = [e["step"] for e in events if e["kind"] == "checkpoint_saved"]
    assert checkpoints[:3] == [40, 80, 120]
    assert "run_finished" in kinds
    states = [e["data"]["to"] for e in events if e["kind"] == "state"]
    assert states[0] == "QUEUED" and states[-1] == "SUCCEEDED" and "RUNNING" in states
    logs = api.get(f"/api/v1/jobs/{job_id}/logs/", limit=10)
    assert logs["count"] >= 120

    # The page a person opens.
    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/jobs/{job_id}/", timeout=10)
    assert page.status_code == 200
    assert "e2e-ddp" in page.text and "SUCCEEDED" in page.text
    assert "checkpoint" in page.text.lower()
    metrics = session.get(f"{stack.web_url}/jobs/{job_id}/metrics.json", timeout=10).json()
    assert metrics["steps"][:3] == [1, 2, 3] and len(metrics["loss"]) == 120


def test_killed_trainer_resumes_from_its_checkpoint(stack: Stack, api: Api) -> None:
    """SIGKILL of the chief halfway through writing the checkpoint of step 150 (the trainers'
    fault injection holds every rank there, however fast this machine trains): the restarted
    trainers resume from step 100, the newest committed checkpoint, and finish."""
    response = api.post("/api/v1/jobs/", ddp_job(
        "kill-resume", steps=400, checkpoint_every=50,
        env={"TRAINERS_PAUSE_AT": "checkpoint_write:150"}))
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]

    def paused(job: dict) -> bool:
        if job["state"] in TERMINAL:
            return True
        lines = api.get(f"/api/v1/jobs/{job_id}/logs/", q="paused at checkpoint_write",
                        limit=5)["results"]
        return bool(lines)

    job = api.wait_for(job_id, paused, timeout_s=240,
                       what="the trainer paused writing the checkpoint of step 150", stack=stack)
    assert job["state"] == "RUNNING"
    vertex_id = job["attempts"][0]["vertex_name"].rsplit("/", 1)[-1]
    pid_file = stack.emulator_data_dir / "jobs" / vertex_id / "workerpool0-0.pid"
    os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
    killed_at = time.monotonic()

    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the job to end after the kill", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    assert time.monotonic() > killed_at

    events = api.events_through(job_id)
    saved = sorted(e["step"] for e in events if e["kind"] == "checkpoint_saved")
    resumed = [e for e in events if e["kind"] == "resumed"]
    assert resumed, "the restarted trainer resumed from a checkpoint"
    # Step 150's checkpoint was never committed: the newest one is step 100's.
    assert resumed[0]["step"] == 100 and saved[:2] == [50, 100]
    assert resumed[0]["data"]["path"].rstrip("/").endswith(f"step-{resumed[0]['step']:08d}")
    assert job["restarts"] >= 1

    steps = api.steps_through(job_id, 400)
    assert max(s["step"] for s in steps) == 400
    # Compare instants, not strings: ISO text drops zero microseconds and would misorder.
    resumed_at = datetime.fromisoformat(resumed[0]["timestamp"])
    after = [s["step"] for s in steps if datetime.fromisoformat(s["timestamp"]) > resumed_at]
    assert after and after[0] == resumed[0]["step"] + 1, "training continued after the checkpoint"


INVALID = [
    ("A100 on n1-standard-4",
     {"chief": {"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_TESLA_A100",
                "accelerator_count": 1}},
     ("chief", ("accelerator_type", "accelerator_count")), "n1-standard-4"),
    ("3 GPUs on a2-highgpu-4g",
     {"chief": {"machine_type": "a2-highgpu-4g", "accelerator_type": "NVIDIA_TESLA_A100",
                "accelerator_count": 3}},
     ("chief", ("accelerator_count",)), "a2-highgpu-4g"),
    ("0 replicas",
     {"workers": {"replica_count": 0}},
     ("workers", ("replica_count",)), "replica"),
    ("50 GB boot disk",
     {"chief": {"machine_type": "n1-standard-4", "boot_disk_size_gb": 50}},
     ("chief", ("boot_disk_size_gb",)), "100"),
]


@pytest.mark.parametrize(("case", "change", "where", "mentions"), INVALID,
                         ids=[c[0] for c in INVALID])
def test_invalid_input_is_refused_on_its_field_and_nothing_is_created(
        stack: Stack, api: Api, case: str, change: dict, where: tuple, mentions: str) -> None:
    before_jobs = api.get("/api/v1/jobs/")["count"]
    before_custom_jobs = len(emulator_jobs(stack))
    body = ddp_job(f"invalid-{case}", steps=10, checkpoint_every=5)
    for key, value in change.items():
        body[key] = {**body.get(key, {}), **value} if isinstance(body.get(key), dict) else value

    response = api.post("/api/v1/jobs/", body)

    assert response.status_code == 400, response.text
    pool, fields = where
    errors = response.json()[pool]
    messages = " ".join(m for f in fields for m in errors.get(f, []))
    assert messages, f"expected an error on {pool}.{fields}, got {response.json()}"
    assert mentions.lower() in messages.lower()
    assert api.get("/api/v1/jobs/")["count"] == before_jobs
    # A wrongly queued submission would have reached the emulator once the worker is past it.
    after_worker_runs(stack, "controlplane.runs.tasks.reconcile_jobs", runs=2)
    assert len(emulator_jobs(stack)) == before_custom_jobs
