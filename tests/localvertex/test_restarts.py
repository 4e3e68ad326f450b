"""Replica failures, restarts, spot preemption and injected API faults."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import grpc
import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from localvertex import auth
from localvertex.admin.client import AdminClient
from tests.localvertex.helpers import (
    PARENT,
    REPO,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    pid_alive,
    python_pool,
    wait_for,
    wait_state,
)

# Left out of `make test-fast` (the inner loop): replicas restarted in the emulator.
pytestmark = pytest.mark.slow

State = aiplatform_v1.JobState
# Sleeps past any test that uses it, however loaded the machine: each one ends it (a cancel,
# another replica's failure, the job's timeout), and must find it still running until then.
SLEEPER = "import time\nprint('started', flush=True)\ntime.sleep(900)"


def read_pid(emulator: EmulatorProcess, job: aiplatform_v1.CustomJob, task: str) -> int | None:
    path = emulator.data_dir / "jobs" / job_id(job) / f"{task}.pid"
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def texts(emulator: EmulatorProcess, job: aiplatform_v1.CustomJob, extra: str = "") -> list[str]:
    return [
        e.text_payload
        for e in entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}" {extra}')
    ]


def test_killed_replica_is_restarted(emulator: EmulatorProcess) -> None:
    job = emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("kill-9", [python_pool(SLEEPER)])
    )
    wait_state(emulator.jobs, job.name, State.JOB_STATE_RUNNING)
    first = wait_for(lambda: read_pid(emulator, job, "workerpool0-0"))
    wait_for(lambda: texts(emulator, job).count("started") == 1)

    os.kill(first, signal.SIGKILL)
    second = wait_for(
        lambda: (pid := read_pid(emulator, job, "workerpool0-0")) not in (None, first) and pid
    )
    wait_for(lambda: texts(emulator, job).count("started") == 2)
    assert pid_alive(second)
    assert emulator.jobs.get_custom_job(name=job.name).state == State.JOB_STATE_RUNNING
    restarts = entries(
        emulator.logs,
        f'resource.labels.job_id="{job_id(job)}" resource.labels.task_name="workerpool0-0" '
        "severity=WARNING",
    )
    assert [e.text_payload for e in restarts] == [
        "Restarting replica workerpool0-0 (restart 1 of 2), exit code -9"
    ]
    with emulator.admin() as admin:
        info = admin.job(job_id(job))
    assert info["restart_count"] == 1
    assert info["replicas"]["workerpool0-0"]["pid"] == second

    emulator.jobs.cancel_custom_job(name=job.name)
    wait_state(emulator.jobs, job.name, State.JOB_STATE_CANCELLED)
    assert not pid_alive(second)


def test_failing_replica_fails_the_job_after_its_restarts(emulator: EmulatorProcess) -> None:
    failing = "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)"
    job = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job("always-fails", [python_pool(SLEEPER), python_pool(failing)]),
    )
    done = wait_state(emulator.jobs, job.name, State.JOB_STATE_FAILED)
    assert done.error.code == 13
    assert "workerpool1-0" in done.error.message and "status of 3" in done.error.message
    lines = texts(emulator, job)
    assert lines.count("boom") == 3  # the first run and 2 restarts
    assert [t for t in lines if t.startswith("Restarting")] == [
        "Restarting replica workerpool1-0 (restart 1 of 2), exit code 3",
        "Restarting replica workerpool1-0 (restart 2 of 2), exit code 3",
    ]
    # The healthy chief was stopped with the job.
    assert read_pid(emulator, job, "workerpool0-0") is None


def test_restart_job_on_worker_restart_restarts_every_replica(emulator: EmulatorProcess) -> None:
    # The replicas meet through files in the job's working folder, which they share and which
    # outlives a restart. The worker fails its first run once the chief has started; run again
    # with the chief, it succeeds, and the chief (whose exit ends the job) waits for that.
    worker = textwrap.dedent(
        """
        import pathlib, sys, time
        if not pathlib.Path("failed-once").exists():
            deadline = time.monotonic() + 120
            while not pathlib.Path("chief-up").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            pathlib.Path("failed-once").write_text("")
            sys.exit(1)
        print("worker ok", flush=True)
        pathlib.Path("worker-ok").write_text("")
        """
    )
    chief = textwrap.dedent(
        """
        import pathlib, sys, time
        print("chief started", flush=True)
        pathlib.Path("chief-up").write_text("")
        deadline = time.monotonic() + 120
        while not pathlib.Path("worker-ok").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        sys.exit(0 if pathlib.Path("worker-ok").exists() else 5)
        """
    )
    job = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "restart-all",
            [python_pool(chief), python_pool(worker)],
            scheduling={"restart_job_on_worker_restart": True},
        ),
    )
    wait_state(emulator.jobs, job.name, State.JOB_STATE_SUCCEEDED)
    lines = texts(emulator, job)
    assert lines.count("chief started") == 2
    assert lines.count("worker ok") == 1
    assert any(t.startswith("Restarting replica workerpool0-0 with the whole job") for t in lines)


def test_spot_preemption_from_the_cli(emulator: EmulatorProcess) -> None:
    handles_sigterm = textwrap.dedent(
        """
        import json, signal, sys, time
        def preempted(signum, frame):
            print(json.dumps({"event": "preempted", "signal": signum}), flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, preempted)
        print("started", flush=True)
        time.sleep(60)
        """
    )
    job = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "spot", [python_pool(handles_sigterm)], scheduling={"strategy": "SPOT"}
        ),
    )
    wait_state(emulator.jobs, job.name, State.JOB_STATE_RUNNING)
    first = wait_for(lambda: read_pid(emulator, job, "workerpool0-0"))
    # Preempted once its SIGTERM handler is in place (it prints "started" after).
    wait_for(lambda: texts(emulator, job).count("started") == 1)
    result = subprocess.run(
        [sys.executable, "-m", "localvertex.admin", "preempt",
         "--target", emulator.admin_address, "--token-file",
         str(emulator.data_dir / auth.TOKEN_FILE), "--job", job_id(job), "--grace", "5"],
        cwd=REPO, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    wait_for(lambda: texts(emulator, job).count("started") == 2)
    assert emulator.jobs.get_custom_job(name=job.name).state == State.JOB_STATE_RUNNING
    assert read_pid(emulator, job, "workerpool0-0") != first
    events = entries(
        emulator.logs, f'resource.labels.job_id="{job_id(job)}" jsonPayload.event=preempted'
    )
    assert len(events) == 1
    with emulator.admin() as admin:
        assert admin.job(job_id(job))["preemption_count"] == 1
    emulator.jobs.cancel_custom_job(name=job.name)
    wait_state(emulator.jobs, job.name, State.JOB_STATE_CANCELLED)


def test_a_preemption_armed_for_a_step_lands_at_that_step(emulator: EmulatorProcess) -> None:
    """Armed before the replica runs at all; it fires on the first `step` event at or past 5,
    once, and the restarted replica (which starts its steps again) is left alone."""
    counts_steps = textwrap.dedent(
        """
        import json, pathlib, signal, sys, time
        restarted = pathlib.Path("preempted-once").exists()  # in the job's working folder
        def preempted(signum, frame):
            pathlib.Path("preempted-once").write_text("")
            print(json.dumps({"event": "preempted", "step": step}), flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, preempted)
        for step in range(1, 41):
            print(json.dumps({"event": "step", "step": step}), flush=True)
            if not restarted and step == 5:
                # The first run goes no further: the preemption armed for step 5 ends it
                # (this waits for its SIGTERM, bounded).
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    time.sleep(0.02)
            elif restarted:
                # The restarted run trains at a pace: a second firing of the armed preemption,
                # which must not come, would have the time to land while it runs.
                time.sleep(0.05)
        """
    )
    job = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "armed", [python_pool(counts_steps)], scheduling={"strategy": "SPOT"}
        ),
    )
    with emulator.admin() as admin:
        armed = wait_for(lambda: _try_arm(admin, job_id(job), 5))
        assert armed["at_step"] == 5
    wait_state(emulator.jobs, job.name, State.JOB_STATE_SUCCEEDED)
    events = json_entries(
        entries(
            emulator.logs, f'resource.labels.job_id="{job_id(job)}" jsonPayload.event=preempted'
        )
    )
    assert len(events) == 1
    assert events[0]["step"] == 5
    with emulator.admin() as admin:
        assert admin.job(job_id(job))["preemption_count"] == 1


def _try_arm(admin: AdminClient, job: str, step: int) -> dict | None:
    try:
        return admin.preempt(job, grace_s=5, at_step=step)
    except grpc.RpcError:
        return None  # no runner yet


def test_arming_refuses_a_bad_step(emulator: EmulatorProcess) -> None:
    job = emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("bad-step", [python_pool(SLEEPER)])
    )
    with emulator.admin() as admin, pytest.raises(grpc.RpcError) as caught:
        admin.preempt(job_id(job), grace_s=1, at_step=-3)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "at_step" in caught.value.details()
    emulator.jobs.cancel_custom_job(name=job.name)
    wait_state(emulator.jobs, job.name, State.JOB_STATE_CANCELLED)


def test_injected_faults(emulator: EmulatorProcess) -> None:
    with emulator.admin() as admin:
        admin.set_faults("CreateCustomJob", "UNAVAILABLE", 1.0)
        try:
            with pytest.raises(exceptions.ServiceUnavailable, match="Injected"):
                emulator.jobs.create_custom_job(
                    parent=PARENT, custom_job=custom_job("faulty", [python_pool("pass")])
                )
        finally:
            admin.set_faults("CreateCustomJob", "UNAVAILABLE", 0)
    job = emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("not-faulty", [python_pool("pass")])
    )
    wait_state(emulator.jobs, job.name, State.JOB_STATE_SUCCEEDED)


def test_scheduling_timeout_fails_the_job(emulator: EmulatorProcess) -> None:
    job = emulator.jobs.create_custom_job(
        parent=PARENT,
        custom_job=custom_job(
            "too-slow", [python_pool(SLEEPER)], scheduling={"timeout": {"seconds": 1}}
        ),
    )
    done = wait_state(emulator.jobs, job.name, State.JOB_STATE_FAILED)
    assert done.error.code == 4
    assert "scheduling.timeout" in done.error.message
