"""What a job's replicas are, and so how often its runner looks at them: processes run as its
team's user in a network of their own (replicas/job_replicas.py), polled every tick; or, in
synthetic mode (settings.synthetic), timers that print the trainers' lines
(synthetic_replicas.py) and wake their runner when one ends, so the runner need not poll them,
only look at its scheduling.timeout now and then, and thousands of runners stay asleep."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from localvertex.config import Settings
from localvertex.jobs.synthetic_replicas import Send, SyntheticReplicas
from localvertex.replicas.job_replicas import LineSink, Replica, ReplicaProcesses
from localvertex.replicas.team_users import team_of

TICK_S = 0.1
SYNTHETIC_TICK_S = 60.0

ReplicaSet = ReplicaProcesses | SyntheticReplicas


def for_job(settings: Settings, job_id: str, job: Any, on_line: LineSink,
            on_saved: Callable[[Replica], None], urgent: threading.Event,
            send: Send) -> tuple[ReplicaSet, float]:
    """The job's replicas and its runner's tick (the longest it waits between looks)."""
    if settings.synthetic:
        return SyntheticReplicas(settings, job_id, job, on_line, on_saved, send), \
            SYNTHETIC_TICK_S
    return ReplicaProcesses(settings, job_id, on_line, on_saved, urgent,
                            team=team_of(job.labels)), TICK_S
