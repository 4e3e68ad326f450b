"""Fault injection for tests: pause at a named point so a test can kill the process right there.

Off unless TRAINERS_PAUSE_AT is set. `checkpoint_write:STEP` pauses every rank once it has
written its model and optimizer part of the checkpoint of STEP, before the trainer state and
the commit marker: the worst moment for a SIGKILL (a spot VM's notice running out). Rank 0
prints a `paused` event so the test knows when to kill; the pause ends after PAUSE_S anyway.
Only a first run pauses: the run that resumes after the kill goes straight on, as the test
wants to see it finish.
"""

from __future__ import annotations

import os
import time

from contract import events as contract_events
from trainers import events

ENV = "TRAINERS_PAUSE_AT"
PAUSE_S = 60.0


def pause_if_requested(point: str, step: int, rank: int, path: str, resumed: bool = False) -> None:
    if resumed or os.environ.get(ENV) != f"{point}:{step}":
        return
    if rank == 0:
        events.emit(
            contract_events.PAUSED, f"paused at {point} of step {step} ({ENV})", point=point,
            step=step, path=path,
        )
    time.sleep(PAUSE_S)
