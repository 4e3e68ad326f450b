"""Turning SIGTERM (a spot preemption notice, ~30 s before SIGKILL) into a clean stop.

The handler only records the signal; the training loop checks it after every step. Ranks get
the signal at different moments (or, on Vertex, only the preempted replica gets it), so the
flags travel in the per-step all-reduce and every rank stops after the same step: nobody is
left waiting in a collective, and one checkpoint holds the state of all.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

# Order of the flags in the per-step all-reduce.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopRequest:
    def __init__(self) -> None:
        self.received: signal.Signals | None = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            # Ray Train runs the training function on a thread of its worker actor, where
            # Python allows no handlers: Ray stops its workers itself.
            return
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received == signal.SIGINT and signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C twice: stop now, without the checkpoint
        if self.received is None:
            self.received = signal.Signals(signum)

    def flags(self) -> list[float]:
        """One flag per stop signal, for the all-reduce (summed over ranks)."""
        return [1.0 if self.received == sig else 0.0 for sig in STOP_SIGNALS]


def agreed_signal(summed_flags: list[float]) -> signal.Signals | None:
    """The signal all ranks stop for, from the summed flags (SIGTERM wins over SIGINT)."""
    for sig, count in zip(STOP_SIGNALS, summed_flags, strict=True):
        if count > 0:
            return sig
    return None


def exit_code(sig: signal.Signals) -> int:
    """128 + the signal number, as a shell reports a process killed by it: non-zero, so Vertex
    does not count a preempted job as succeeded."""
    return 128 + int(sig)
