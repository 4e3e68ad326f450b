"""Preemptions armed for a training step (admin PreemptJob with at_step).

A preemption armed for step N fires once any replica prints a `step` event at or past N: a
deterministic moment for tests and the demo, however fast the machine trains. Several may be
armed (the second for the run that resumes after the first); the lowest fires first, each once.
"""

from __future__ import annotations

import json
import threading

from contract import events as contract_events


class ArmedPreemptions:
    """The armed (step, grace_s) pairs of one job, in step order; safe to use from any thread
    (the replicas' output readers check every line)."""

    def __init__(self) -> None:
        self._armed: list[tuple[int, float]] = []
        self._lock = threading.Lock()

    def arm(self, step: int, grace_s: float) -> None:
        with self._lock:
            self._armed = sorted([*self._armed, (step, grace_s)])

    def due(self, line: str) -> float | None:
        """The grace period of the preemption this output line sets off, if any (it is then
        disarmed); None for every other line."""
        # Cheap checks first: this runs on every line every replica prints.
        if not self._armed or '"step"' not in line:
            return None
        step = _step_of(line)
        with self._lock:
            if not self._armed or step is None or step < self._armed[0][0]:
                return None
            _, grace_s = self._armed.pop(0)
        return grace_s


def _step_of(line: str) -> int | None:
    """The step of a trainer's `{"event": "step", "step": N, ...}` line; None for other lines."""
    try:
        payload = json.loads(line)
    except ValueError:
        return None
    if not isinstance(payload, dict) or payload.get("event") != contract_events.STEP:
        return None
    step = payload.get("step")
    return step if isinstance(step, int) else None
