"""Rate limits on the REST API, per user (or per client address without a login).

The rates are read from settings at each request rather than when the class is defined, so a
deployment (CP_API_RATE_USER, CP_API_RATE_ANON) and a test can change them.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class UserRate(UserRateThrottle):
    def get_rate(self) -> str | None:
        return settings.CP_API_RATE_USER or None


class AnonRate(AnonRateThrottle):
    def get_rate(self) -> str | None:
        return settings.CP_API_RATE_ANON or None
