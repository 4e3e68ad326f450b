"""The app's own view of what went wrong talking to a training backend.

Google's exceptions are translated into these at the edge (controlplane/backends/training.py), so
the rest of the code decides what to do by meaning, not by gRPC status code.
"""

from __future__ import annotations


class BackendError(Exception):
    """Something unexpected: shown to operators, not retried automatically."""


class TransientBackendError(BackendError):
    """Worth trying the same step again later (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL...)."""


class QuotaExceeded(TransientBackendError):
    """RESOURCE_EXHAUSTED: back off before the next call.

    `quota` holds what the refusal said about the quota when it said it (Vertex's ErrorInfo
    metadata: quota_metric, region, limit, usage, requested), as strings; {} otherwise."""

    def __init__(self, message: str, quota: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.quota = dict(quota or {})


class RateLimited(TransientBackendError):
    """RESOURCE_EXHAUSTED for a per-minute request quota (Vertex's "resource management (CRUD)
    requests per minute per region"): nothing is wrong with the request or the job, the same
    call works once the minute has room. Retried with backoff like any transient error, and
    never a reason to fail a job or to put it in WAITING_FOR_QUOTA (that is QuotaExceeded:
    the job's accelerators do not fit the project's quota).

    `quota` holds the refusal's ErrorInfo metadata (quota_metric, quota_limit, ...), as
    strings; {} when it named none."""

    def __init__(self, message: str, quota: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.quota = dict(quota or {})


class InvalidJobSpec(BackendError):
    """The backend refused the job as written: the user must change it; never retried."""


class PermissionDenied(BackendError):
    """The service account or caller lacks a permission: a configuration error, never retried."""


class NotFound(BackendError):
    """The resource does not exist (deleted, or never created)."""


class FailedPrecondition(BackendError):
    """The call does not apply in the resource's current state (e.g. cancel a finished job)."""
