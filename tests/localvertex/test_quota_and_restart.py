"""The Cloud Logging read quota, and state that outlives the emulator process."""

from __future__ import annotations

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    custom_job,
    entries,
    job_id,
    pid_alive,
    python_pool,
    wait_for,
    wait_state,
)

# Left out of `make test-fast` (the inner loop): emulator restarts.
pytestmark = pytest.mark.slow

State = aiplatform_v1.JobState


def test_list_log_entries_quota(start_emulator) -> None:
    emulator = start_emulator("--logging-quota-per-minute", "3")
    for _ in range(3):
        entries(emulator.logs, "")
    with pytest.raises(exceptions.ResourceExhausted, match="Quota exceeded") as caught:
        entries(emulator.logs, "")
    assert caught.value.reason == "RATE_LIMIT_EXCEEDED"
    assert "per minute" in caught.value.message
    # Writes are not read requests; other projects have their own quota.
    emulator.logs.write_log_entries(
        log_name=f"projects/{PROJECT}/logs/x", entries=[{"text_payload": "still writable"}]
    )
    assert list(emulator.logs.list_log_entries(resource_names=["projects/other"])) == []


def test_jobs_and_logs_survive_an_emulator_restart(start_emulator) -> None:
    emulator = start_emulator("--logging-quota-per-minute", "0")
    jobs = emulator.jobs
    finished = jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("before", [python_pool("print('hello before')")])
    )
    wait_state(jobs, finished.name, State.JOB_STATE_SUCCEEDED)
    running = jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "long", [python_pool("import time\nprint('started', flush=True)\ntime.sleep(60)")]
        ),
    )
    wait_state(jobs, running.name, State.JOB_STATE_RUNNING)
    pid_file = emulator.data_dir / "jobs" / job_id(running) / "workerpool0-0.pid"
    old_pid = int(wait_for(pid_file.read_text))
    # The replica's first line must be stored before the stop, or there is nothing to compare.
    wait_for(lambda: "started" in [
        e.text_payload
        for e in entries(emulator.logs, f'resource.labels.job_id="{job_id(running)}"')
    ])

    assert emulator.stop() == 0  # SIGTERM: a clean exit
    assert not pid_alive(old_pid)
    emulator.start()
    jobs = emulator.jobs

    assert jobs.get_custom_job(name=finished.name).state == State.JOB_STATE_SUCCEEDED
    texts = [
        e.text_payload for e in entries(emulator.logs, f"resource.labels.job_id={job_id(finished)}")
    ]
    assert "hello before" in texts

    def restarted() -> bool:
        lines = [
            e.text_payload
            for e in entries(emulator.logs, f'resource.labels.job_id="{job_id(running)}"')
        ]
        return lines.count("started") == 2 and lines

    lines = wait_for(restarted)
    assert "Restarting replica workerpool0-0 (restart 1 of 2) after the emulator restarted" in lines
    assert jobs.get_custom_job(name=running.name).state == State.JOB_STATE_RUNNING
    assert int(pid_file.read_text()) != old_pid
    names = {j.display_name for j in jobs.list_custom_jobs(parent=PARENT)}
    assert {"before", "long"} <= names
    jobs.cancel_custom_job(name=running.name)
    wait_state(jobs, running.name, State.JOB_STATE_CANCELLED)
