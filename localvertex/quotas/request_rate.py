"""Vertex AI's "Resource management (CRUD) requests per minute per region" quota: every call of
an aiplatform.v1 service (create, get, list, cancel, delete of jobs, tuning jobs, persistent
resources, models, endpoints; deploy and undeploy) counts against its project and region, and
a call past the limit in the last minute is refused with RESOURCE_EXHAUSTED (HTTP 429), as
Google refuses it, and is not counted. Predictions have a quota of their own and do not count.

The limit is Vertex's default, 600 a minute per region (VERTEX_FACTS.md A1), unless the
emulator is started with another (`--crud-quota-per-minute`, 0 for none). The ErrorInfo is the
shape Google attaches to a rate quota's refusal (reason RATE_LIMIT_EXCEEDED, the service in its
metadata), which is what the control plane reads (controlplane/backends/training.py); the
metric's and the limit's exact names on Vertex are UNCONFIRMED.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import grpc
from google.rpc import error_details_pb2

# A sliding minute per key, shared with Cloud Logging's read quota (the same counting rule).
from localvertex.cloudlogging.read_quota import SlidingWindowLimiter
from localvertex.core.errors import ApiError

DEFAULT_PER_MINUTE = 600
SERVICE_NAME = "aiplatform.googleapis.com"
METRIC = f"{SERVICE_NAME}/resource_management_requests"
LIMIT_NAME = "ResourceManagementRequestsPerMinutePerProjectPerRegion"
# Every version's services (v1, and v1beta1's that the emulator also serves) but predictions.
_COUNTED_PREFIX = "google.cloud.aiplatform."
_NOT_COUNTED_SUFFIX = ".PredictionService"
# Where a request names its project and region: the first of these fields that holds a
# resource name (`parent` for create and list, `name` for get, cancel and delete, `endpoint`
# for deploy and undeploy).
_NAMED_IN = ("parent", "name", "endpoint", "model", "resource")
_LOCATION = re.compile(r"^projects/([^/]+)/locations/([^/]+)")


def counts(service: str) -> bool:
    """Whether SERVICE's calls count against the quota."""
    return service.startswith(_COUNTED_PREFIX) and not service.endswith(_NOT_COUNTED_SUFFIX)


def location_of(request: Any) -> tuple[str, str] | None:
    """(project, region) the request is for, or None when it names neither."""
    for field in _NAMED_IN:
        value = getattr(request, field, None)
        if isinstance(value, str) and (m := _LOCATION.match(value)):
            return m.group(1), m.group(2)
    return None


def refusal(project: str, region: str, limit: int) -> ApiError:
    """RESOURCE_EXHAUSTED worded as Google words a rate quota's refusal, with its ErrorInfo."""
    message = (
        "Quota exceeded for quota metric 'Resource management (CRUD) requests' and limit "
        "'Resource management (CRUD) requests per minute per region' of service "
        f"'{SERVICE_NAME}' for consumer 'project_number:{project}' in region {region} "
        f"(limit {limit} a minute)."
    )
    info = error_details_pb2.ErrorInfo(
        reason="RATE_LIMIT_EXCEEDED",
        domain="googleapis.com",
        metadata={
            "consumer": f"projects/{project}",
            "quota_metric": METRIC,
            "quota_limit": LIMIT_NAME,
            "quota_limit_value": str(limit),
            "quota_location": region,
            "service": SERVICE_NAME,
        },
    )
    return ApiError(grpc.StatusCode.RESOURCE_EXHAUSTED, message, [info])


class RequestRateQuota:
    """The quota of every project and region the emulator serves; PER_MINUTE 0 is none."""

    def __init__(self, per_minute: int = DEFAULT_PER_MINUTE, window_s: float = 60.0) -> None:
        if per_minute < 0:
            raise ValueError(f"crud quota per minute must be 0 (none) or more, not {per_minute}")
        self._limiter = SlidingWindowLimiter(per_minute, window_s)

    @property
    def per_minute(self) -> int:
        return self._limiter.limit

    def set_limit(self, per_minute: int) -> None:
        """A new limit from now on (0: none); the calls of the last minute still count."""
        if per_minute < 0:
            raise ValueError(f"crud quota per minute must be 0 (none) or more, not {per_minute}")
        self._limiter.limit = per_minute

    def check(self, request: Any) -> None:
        """Count the call; RESOURCE_EXHAUSTED when its region's minute is full."""
        where = location_of(request)
        if where is None or self._limiter.limit <= 0:
            return
        project, region = where
        if not self._limiter.allow(f"{project}/{region}"):
            raise refusal(project, region, self._limiter.limit)

    def guard(self, service: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """FN, checking the quota first when SERVICE's calls count against it."""
        if not counts(service):
            return fn

        def checked(request: Any, context: Any) -> Any:
            self.check(request)
            return fn(request, context)

        return checked
