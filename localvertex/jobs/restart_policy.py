"""When a failed replica is restarted, how many times, and how an exit is described.

Vertex restarts a replica that exits non-zero (VERTEX_FACTS.md s. 2), at most a fixed number of
times per replica; `scheduling.disable_retries` turns that off, and
`scheduling.restart_job_on_worker_restart` restarts every replica with the failed one.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from google.protobuf import duration_pb2

from localvertex.config import Settings


@dataclass(frozen=True)
class RestartPolicy:
    max_restarts: int
    # restart_job_on_worker_restart: one replica's restart restarts all of them.
    restart_all: bool
    # scheduling.timeout: the job fails once it has run this long.
    timeout_s: float | None

    @classmethod
    def for_job(cls, scheduling, settings: Settings) -> RestartPolicy:
        """From a CustomJobSpec's `scheduling` (aiplatform.v1 Scheduling protobuf)."""
        return cls(
            max_restarts=0 if scheduling.disable_retries else settings.max_restarts,
            restart_all=scheduling.restart_job_on_worker_restart
            and not scheduling.disable_retries,
            timeout_s=_seconds(scheduling.timeout) if scheduling.HasField("timeout") else None,
        )

    def may_restart(self, restarts: int) -> bool:
        """Whether a replica restarted `restarts` times so far may be restarted again."""
        return restarts < self.max_restarts


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return "Error"


def failure_message(task: str, rc: int, restarts: int) -> str:
    """CustomJob.error.message for a replica that failed with no restart left."""
    restarted = f" after {restarts} restarts" if restarts else ""
    return (
        f"The replica {task} exited with a non-zero status of {rc}{restarted}. "
        f"Termination reason: {describe_exit(rc)}."
    )


def _seconds(duration: duration_pb2.Duration) -> float:
    return duration.seconds + duration.nanos / 1e9
