"""The writes a job's runner makes to its JobRecord: state changes, the end, replica pids, and
the restart and preemption counts. Each is one read-modify-write through JobStore.update."""

from __future__ import annotations

import time

from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.store import JobRecord, JobState, JobStore

# google.rpc.Code values used in CustomJob.error.
CODE_CANCELLED = 1
CODE_DEADLINE_EXCEEDED = 4
CODE_RESOURCE_EXHAUSTED = 8
CODE_INTERNAL = 13


def finish_record(
    jobs: JobStore, job_id: str, state: int, code: int | None, message: str | None
) -> JobRecord:
    def change(record: JobRecord) -> None:
        if record.terminal:
            return
        now = to_timestamp(time.time_ns())
        record.job.state = state
        record.job.update_time.CopyFrom(now)
        record.job.end_time.CopyFrom(now)
        if code is not None:
            record.job.error.code = code
            record.job.error.message = message or ""

    return jobs.update(job_id, change)


def set_state(jobs: JobStore, job_id: str, state: int) -> None:
    def change(record: JobRecord) -> None:
        # A cancel request wins over the runner moving on; nothing leaves a terminal state.
        if record.terminal or record.state == JobState.JOB_STATE_CANCELLING:
            return
        now = to_timestamp(time.time_ns())
        record.job.state = state
        record.job.update_time.CopyFrom(now)
        if state == JobState.JOB_STATE_RUNNING and not record.job.HasField("start_time"):
            record.job.start_time.CopyFrom(now)

    jobs.update(job_id, change)


def save_replica(
    jobs: JobStore, job_id: str, task: str, pid: int | None, restarts: int, port: int
) -> None:
    def change(record: JobRecord) -> None:
        record.replicas[task] = {"pid": pid, "restarts": restarts, "port": port}

    jobs.update(job_id, change)


def count_restart(jobs: JobStore, job_id: str) -> None:
    def change(record: JobRecord) -> None:
        record.restart_count += 1

    jobs.update(job_id, change)


def count_preemption(jobs: JobStore, job_id: str) -> JobRecord:
    """Add one preemption; the updated record (its preemption_count included)."""

    def change(record: JobRecord) -> None:
        record.preemption_count += 1

    return jobs.update(job_id, change)
