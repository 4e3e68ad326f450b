"""How long JAX has spent compiling in this process, by its own clock: jax.monitoring reports
the duration of each stage of a jit's compile (tracing to a jaxpr, lowering to MLIR, the
backend's compile or its persistent cache's read), all under /jax/core/compile/.

A listener cannot be removed, so one is registered once per process, on first use.
"""

from __future__ import annotations

import threading
from typing import Any

import jax

COMPILE_EVENTS = "/jax/core/compile/"

_lock = threading.Lock()
_total = [0.0]
_listening = [False]


def _heard(event: str, duration: float, **_: Any) -> None:
    if event.startswith(COMPILE_EVENTS):
        with _lock:
            _total[0] += duration


def seconds() -> float:
    """Cumulative compile seconds in this process since the first call."""
    with _lock:
        if not _listening[0]:
            jax.monitoring.register_event_duration_secs_listener(_heard)
            _listening[0] = True
        return _total[0]
