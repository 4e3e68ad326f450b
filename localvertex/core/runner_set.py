"""The runners of one kind of long-running resource (training pipelines, tuning jobs): at most
one per resource, none started once the emulator is stopping, each forgotten when it ends.

A Cancel wakes the resource's runner, or starts one when none runs (after a restart of the
emulator, say): the runner itself ends what it finds CANCELLING, so both cases take one path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Runner(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def join(self, timeout: float) -> None: ...
    def wake(self) -> None: ...


R = TypeVar("R", bound=Runner)


class RunnerSet(Generic[R]):
    """``make(resource_id, finished)`` builds the runner; it calls ``finished(resource_id)``
    when it ends."""

    def __init__(self, make: Callable[[str, Callable[[str], None]], R]) -> None:
        self._make = make
        self._runners: dict[str, R] = {}
        self._lock = threading.Lock()
        self._stopping = False

    def start(self, resource_id: str) -> None:
        with self._lock:
            if self._stopping or resource_id in self._runners:
                return
            runner = self._runners[resource_id] = self._make(resource_id, self._finished)
        runner.start()

    def wake_or_start(self, resource_id: str) -> None:
        with self._lock:
            runner = self._runners.get(resource_id)
        if runner is not None:
            runner.wake()
        else:
            self.start(resource_id)

    def shutdown(self, timeout: float) -> None:
        with self._lock:
            self._stopping = True
            runners = list(self._runners.values())
        for runner in runners:
            runner.stop()
        for runner in runners:
            runner.join(timeout)

    def _finished(self, resource_id: str) -> None:
        with self._lock:
            self._runners.pop(resource_id, None)
