"""The read budget of one Google Cloud project: entries.list calls, persisted.

Two rules: at most `per_minute` calls in any sliding 60 s (Cloud Logging's quota, less our
headroom), and at most `burst` calls at once (a token bucket refilled at per_minute/60 per
second), so a backlog is read at a steady pace and every sweep keeps some calls for the fresh
read. After RESOURCE_EXHAUSTED (someone else used the project's quota) no call is made until
an exponentially growing pause is over. The state is a database row, so the budget holds
whichever worker runs the next sweep.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime

from controlplane.logs.models import LogReadQuota

WINDOW_S = 60.0
# A call is counted this much longer than its minute: the server counts it when it arrives,
# a moment after we note it, and a call made the instant an old one leaves our window could
# otherwise land in the server's minute with it.
EDGE_S = 0.5
MIN_BACKOFF_S = 5.0
MAX_BACKOFF_S = 120.0


class ReadBudget:
    def __init__(self, project: str, per_minute: int, burst: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self.burst = max(1, min(burst, per_minute))
        self.clock = clock
        self.row, _ = LogReadQuota.objects.get_or_create(project=project)
        now = clock()
        self.calls = sorted(c for c in self.row.calls if isinstance(c, (int, float))
                            and c > now - WINDOW_S - EDGE_S)

    def _prune(self, now: float) -> None:
        while self.calls and self.calls[0] <= now - WINDOW_S - EDGE_S:
            self.calls.pop(0)

    def _bucket_wait(self, now: float) -> float:
        """Seconds until the token bucket holds a token, replayed from the recorded calls."""
        rate = self.per_minute / WINDOW_S
        tokens, last = float(self.burst), now - WINDOW_S
        for t in self.calls:
            tokens = min(self.burst, tokens + (t - last) * rate) - 1
            last = t
        tokens = min(self.burst, tokens + (now - last) * rate)
        return 0.0 if tokens >= 1 else (1 - tokens) / rate

    def wait_s(self) -> float:
        """Seconds until the next call is allowed (0: now)."""
        now = self.clock()
        self._prune(now)
        waits = [self._bucket_wait(now)]
        if len(self.calls) >= self.per_minute:
            waits.append(self.calls[len(self.calls) - self.per_minute] + WINDOW_S + EDGE_S
                         - now)
        if self.row.paused_until is not None:
            waits.append(self.row.paused_until.timestamp() - now)
        return max(0.0, *waits)

    def spend(self) -> None:
        self.calls.append(self.clock())

    def succeeded(self) -> None:
        self.row.backoff_s = 0.0
        self.row.paused_until = None

    def exhausted(self) -> float:
        """The project's quota ran out: pause, longer each time in a row. Returns the pause."""
        backoff = min(MAX_BACKOFF_S, max(MIN_BACKOFF_S, self.row.backoff_s * 2))
        self.row.backoff_s = backoff
        pause = backoff * random.uniform(0.8, 1.2)  # so several followers do not align
        self.row.paused_until = _at(self.clock() + pause)
        return pause

    def save(self) -> None:
        now = self.clock()
        self._prune(now)
        self.row.calls = [round(c, 3) for c in self.calls]
        self.row.save(update_fields=["calls", "paused_until", "backoff_s"])

    def calls_in_last_minute(self) -> int:
        self._prune(self.clock())
        return len(self.calls)


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)

