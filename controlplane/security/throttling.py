"""Rate limits on the REST API, per user (or per client address without a login).

The rates are read from settings at each request rather than when the class is defined, so a
deployment (CP_API_RATE_USER, CP_API_RATE_ANON) and a test can change them.

Counted by a sliding window made of two fixed ones (the scheme NGINX and Cloudflare describe):
each window of the rate's period keeps one counter (models.RateWindow), and a request is let
through while the current window's count plus the previous window's, weighted by how much of
it still lies in the last period, stays within the limit. One statement counts the request and
reads both counts. REST framework's own throttle keeps the time of every request of the period
in the cache instead, a list of up to the whole rate (1,200 floats a user) that each request
reads, rewrites and writes back: five or six round trips to the database cache and a few
milliseconds of every API call.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from controlplane.security.models import RateWindow

KEY_MAX = 200  # models.RateWindow.key


class _SlidingWindow(SimpleRateThrottle):
    wait_s: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        if len(key) > KEY_MAX:
            key = "sha256:" + hashlib.sha256(key.encode()).hexdigest()
        period = float(self.duration)
        window, into = divmod(self.timer(), period)
        done, before = RateWindow.add(key, int(window))
        done -= 1  # the requests before this one
        if done + before * (1.0 - into / period) >= self.num_requests:
            RateWindow.add(key, int(window), -1)  # a refused request is not counted
            self.wait_s = _wait(self.num_requests, done, before, into, period)
            return False
        return True

    def wait(self) -> float | None:
        return self.wait_s


def _wait(limit: int, done: int, before: int, into: float, period: float) -> float:
    """Seconds until the window lets a request through again (for Retry-After)."""
    if done < limit:
        # The previous window's weight must fall: before * (1 - t / period) + done < limit.
        return max(1.0, (1.0 - (limit - done) / before) * period - into + 1e-3)
    # This window is full: once it is the previous one, its weight must fall the same way.
    return max(1.0, period - into + (1.0 - limit / done) * period + 1e-3)


class UserRate(_SlidingWindow, UserRateThrottle):
    def get_rate(self) -> str | None:
        return settings.CP_API_RATE_USER or None


class AnonRate(_SlidingWindow, AnonRateThrottle):
    def get_rate(self) -> str | None:
        return settings.CP_API_RATE_ANON or None

