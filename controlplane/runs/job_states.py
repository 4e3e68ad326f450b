"""The job state the control plane records for each state Vertex reports for a CustomJob."""

from __future__ import annotations

from controlplane.runs.models import JobState

VERTEX_TO_JOB_STATE: dict[str, str] = {
    "JOB_STATE_QUEUED": JobState.QUEUED,
    "JOB_STATE_PENDING": JobState.PENDING,
    "JOB_STATE_RUNNING": JobState.RUNNING,
    "JOB_STATE_UPDATING": JobState.RUNNING,
    "JOB_STATE_PAUSED": JobState.RUNNING,
    "JOB_STATE_CANCELLING": JobState.CANCELLING,
    "JOB_STATE_SUCCEEDED": JobState.SUCCEEDED,
    "JOB_STATE_FAILED": JobState.FAILED,
    "JOB_STATE_CANCELLED": JobState.CANCELLED,
    # Terminal states Vertex uses elsewhere: treat as ended without success.
    "JOB_STATE_EXPIRED": JobState.FAILED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": JobState.FAILED,
}


def job_state_for(vertex_state: str) -> str | None:
    """The job's state for VERTEX_STATE; None for a state Vertex adds later (left unchanged)."""
    return VERTEX_TO_JOB_STATE.get(vertex_state)
