"""The job path through the client generated from the schema (client/vertex_control_plane_client),
trusting it: typed request models in, typed answers (and typed refusals) out. Submit, replay
with the same Idempotency-Key, follow to SUCCEEDED, read steps, events, logs and attempts,
resubmit from a checkpoint; a refused job, a conflict and a missing job come back as the
documented FieldErrors and Detail."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from config.devstack import Stack
from vertex_control_plane_client import AuthenticatedClient
from vertex_control_plane_client.api.jobs import (
    jobs_attempts_list,
    jobs_cancel_create,
    jobs_create,
    jobs_events_list,
    jobs_logs_list,
    jobs_resubmit_create,
    jobs_retrieve,
    jobs_steps_list,
    jobs_validate_create,
)
from vertex_control_plane_client.models import (
    Detail,
    FieldErrors,
    Job,
    JobCheck,
    JobRequestRequest,
    PoolRequest,
    ResubmitRequest,
    StateEnum,
)

pytestmark = pytest.mark.integration

TERMINAL = {StateEnum.SUCCEEDED, StateEnum.FAILED, StateEnum.CANCELLED}


@pytest.fixture
def client(stack: Stack, member: dict[str, Any]) -> AuthenticatedClient:
    return AuthenticatedClient(base_url=stack.web_url, token=member["token"], prefix="Token",
                               raise_on_unexpected_status=True)


def small_job(name: str) -> JobRequestRequest:
    return JobRequestRequest(
        name=name, chief=PoolRequest(machine_type="n1-standard-4"),
        args=["--preset", "tiny", "--steps", "12", "--checkpoint-every", "6"])


def wait_until_ended(client: AuthenticatedClient, job_id: int) -> Job:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = jobs_retrieve.sync(job_id, client=client)
        assert isinstance(job, Job)
        if job.state in TERMINAL:
            return job
        time.sleep(1)
    raise AssertionError(f"job {job_id} did not end: {job.state}")


def test_the_job_path_through_the_generated_client(client: AuthenticatedClient) -> None:
    key = str(uuid.uuid4())
    created = jobs_create.sync_detailed(client=client, body=small_job("gen-client"),
                                        idempotency_key=key)
    assert created.status_code == 201, created.content
    assert isinstance(created.parsed, Job)
    job = created.parsed
    assert job.name == "gen-client" and job.team == "vision"
    replayed = jobs_create.sync_detailed(client=client, body=small_job("gen-client"),
                                         idempotency_key=key)
    assert replayed.status_code == 201 and isinstance(replayed.parsed, Job)
    assert replayed.parsed.id == job.id

    ended = wait_until_ended(client, job.id)
    assert ended.state == StateEnum.SUCCEEDED, ended.error_message

    # The follower may store the last lines a moment after the job's state flips to terminal.
    deadline = time.monotonic() + 30
    while True:
        steps = jobs_steps_list.sync(job.id, client=client, limit=1000)
        assert steps is not None
        if any(s.step == 12 for s in steps.results) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert [s.step for s in steps.results][-1] == 12
    events = jobs_events_list.sync(job.id, client=client, limit=1000)
    assert events is not None
    assert {e.kind for e in events.results} >= {"checkpoint_saved"}
    attempts = jobs_attempts_list.sync(job.id, client=client)
    assert attempts is not None and [a.number for a in attempts.results] == [1]
    deadline = time.monotonic() + 30
    messages: list[str] = []
    while time.monotonic() < deadline and not any("finished at step 12" in m for m in messages):
        logs = jobs_logs_list.sync(job.id, client=client, limit=1000)
        assert logs is not None
        messages = [line.message for line in logs.results]
        time.sleep(1)
    assert any("finished at step 12" in m for m in messages), messages[-10:]

    # Cancelling a job that has ended is a conflict, keyed by the field that says why.
    cancel = jobs_cancel_create.sync_detailed(job.id, client=client)
    assert cancel.status_code == 409 and isinstance(cancel.parsed, FieldErrors)
    assert "already SUCCEEDED" in cancel.parsed["state"][0]

    again = jobs_resubmit_create.sync_detailed(
        job.id, client=client, body=ResubmitRequest(checkpoint_step=6, name="gen-again"),
        idempotency_key=str(uuid.uuid4()))
    assert again.status_code == 201 and isinstance(again.parsed, Job), again.content
    assert again.parsed.name == "gen-again"
    assert wait_until_ended(client, again.parsed.id).state == StateEnum.SUCCEEDED


def test_refusals_come_back_as_their_documented_bodies(client: AuthenticatedClient) -> None:
    bad = small_job("gen-bad")
    bad.chief = PoolRequest(machine_type="a2-highgpu-4g", accelerator_type="NVIDIA_TESLA_A100",
                            accelerator_count=3)
    refused = jobs_create.sync_detailed(client=client, body=bad)
    assert refused.status_code == 400 and isinstance(refused.parsed, FieldErrors)
    assert "a2-highgpu-4g takes 4" in refused.parsed["chief"]["accelerator_count"][0]

    verdict = jobs_validate_create.sync(client=client, body=bad)
    assert isinstance(verdict, JobCheck)
    assert verdict.valid is False
    assert "chief.accelerator_count" in verdict.errors.additional_properties

    missing = jobs_retrieve.sync_detailed(999_999, client=client)
    assert missing.status_code == 404 and isinstance(missing.parsed, Detail)
    assert missing.parsed.detail
