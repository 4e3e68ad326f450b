"""Cloud Logging's read quota: entries.list is limited per project over a sliding minute."""

from __future__ import annotations

import collections
import threading
import time


class SlidingWindowLimiter:
    def __init__(self, limit: int, window_s: float = 60.0) -> None:
        self.limit = limit  # 0: unlimited
        self.window_s = window_s
        self._calls: dict[str, collections.deque[float]] = collections.defaultdict(
            collections.deque
        )
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Count one call for `key`; False (and not counted) when the window is full."""
        if self.limit <= 0:
            return True
        now = time.monotonic()
        with self._lock:
            calls = self._calls[key]
            while calls and calls[0] <= now - self.window_s:
                calls.popleft()
            if len(calls) >= self.limit:
                return False
            calls.append(now)
            return True
