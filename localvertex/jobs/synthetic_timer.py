"""One thread that runs every synthetic replica's next tick when it is due (a heap of
deadlines), so thousands of synthetic jobs cost one thread, not one per replica.

A tick must be short (it prints a line or two and schedules the next); one that raises is
logged and dropped. A tick that is no longer wanted (its replica was stopped) is not taken off
the heap: it runs and sees that itself (synthetic_replicas.py checks the replica's process).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Timer:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()  # ties run in the order they were asked for
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def call_at(self, when: float, tick: Callable[[], None]) -> None:
        """Run `tick` on the timer's thread at time.monotonic() `when` (or soon after)."""
        with self._changed:
            heapq.heappush(self._heap, (when, next(self._order), tick))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="synthetic-timer",
                                                daemon=True)
                self._thread.start()
            if self._heap[0][2] is tick:  # a new earliest deadline: the wait is shorter
                self._changed.notify()

    def pending(self) -> int:
        with self._changed:
            return len(self._heap)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._changed.wait(timeout)
                _, _, tick = heapq.heappop(self._heap)
            try:
                tick()
            except Exception:  # one replica's tick never stops the others'
                log.exception("synthetic replica tick failed")


_shared: Timer | None = None
_shared_lock = threading.Lock()


def shared() -> Timer:
    """The process's timer: every emulator in it shares the one thread."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Timer()
        return _shared
