"""The interface the control plane needs from a training backend, and the data it returns.

Everything crossing this boundary is plain Python: CustomJobs as Vertex REST JSON dicts
(camelCase, as `gcloud` and the REST API write them), results as the dataclasses below.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from vertexplan.logparse.entries import LogEntry

# Vertex JobState names whose job will not change any more (VERTEX_FACTS.md section 2).
TERMINAL_VERTEX_STATES = frozenset({
    "JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED",
    "JOB_STATE_PARTIALLY_SUCCEEDED",
})


@dataclass(frozen=True)
class RemoteJob:
    name: str                     # projects/{p}/locations/{l}/customJobs/{id}
    display_name: str
    state: str                    # a JobState enum name, e.g. "JOB_STATE_RUNNING"
    labels: dict[str, str] = field(default_factory=dict)
    create_time: datetime | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    error_code: int = 0
    error_message: str = ""

    @property
    def job_id(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_VERTEX_STATES


@dataclass(frozen=True)
class JobPage:
    """One page of ListCustomJobs: the CustomJobs on it, and the next page's token ("" on the
    last page)."""

    jobs: list[RemoteJob]
    next_page_token: str


@dataclass(frozen=True)
class LogPage:
    """One page of entries.list, oldest first. Cloud Logging may return an empty page with a
    token (keep paging); no token means the query has been read to its end."""

    entries: list[LogEntry]
    next_page_token: str


@dataclass(frozen=True)
class TailBatch:
    """One TailLogEntries response: entries in timestamp order within the buffer window, and
    how many matching entries the service left out of the stream (rate limit, not consumed):
    those are found later by a list query."""

    entries: list[LogEntry]
    suppressed: int = 0


class TailStream(abc.ABC):
    """An open TailLogEntries session. Iterating blocks for the next batch; cancel() ends it
    (from any thread), after which iteration stops."""

    @abc.abstractmethod
    def __iter__(self) -> Iterator[TailBatch]: ...

    @abc.abstractmethod
    def cancel(self) -> None: ...


@dataclass(frozen=True)
class RemoteTrial:
    """One trial of a HyperparameterTuningJob, as plain values."""

    id: str
    state: str                    # a Trial.State name: ACTIVE, SUCCEEDED, INFEASIBLE...
    parameters: dict[str, Any]    # parameter_id -> number or string
    final_metrics: dict[str, float] = field(default_factory=dict)
    final_step: int | None = None
    # [{"step": int, "metrics": {metric_id: value}}], as reported, oldest first
    measurements: list[dict[str, Any]] = field(default_factory=list)
    custom_job: str = ""
    infeasible_reason: str = ""
    start_time: datetime | None = None
    end_time: datetime | None = None


@dataclass(frozen=True)
class RemoteTuningJob:
    name: str                     # projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}
    display_name: str
    state: str                    # a JobState name
    labels: dict[str, str] = field(default_factory=dict)
    trials: list[RemoteTrial] = field(default_factory=list)
    create_time: datetime | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    error_code: int = 0
    error_message: str = ""

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_VERTEX_STATES


@dataclass(frozen=True)
class ReplicaMetrics:
    """One replica's system metrics over a period (Cloud Monitoring's training metrics,
    VERTEX_FACTS.md A9), each series oldest first as (time, value): utilisations as fractions
    (CPU may pass 1 on several cores), memory_bytes in bytes; a series Vertex did not write
    (no accelerator, a metric not yet sampled) is empty."""

    replica: str                  # the task name: workerpool0-0
    cpu: list[tuple[datetime, float]] = field(default_factory=list)
    memory: list[tuple[datetime, float]] = field(default_factory=list)
    memory_bytes: list[tuple[datetime, float]] = field(default_factory=list)
    accelerator: list[tuple[datetime, float]] = field(default_factory=list)
    accelerator_memory: list[tuple[datetime, float]] = field(default_factory=list)


class Backend(abc.ABC):
    """A place that runs CustomJobs: Vertex AI, or the local emulator speaking its protocol."""

    project: str
    region: str

    @abc.abstractmethod
    def create_custom_job(self, custom_job: dict[str, Any]) -> RemoteJob: ...

    @abc.abstractmethod
    def find_custom_job(self, display_name: str, labels: dict[str, str]) -> RemoteJob | None:
        """The CustomJob an earlier try created with this display name and labels, if any."""

    @abc.abstractmethod
    def get_custom_job(self, name: str) -> RemoteJob: ...

    @abc.abstractmethod
    def list_custom_jobs(self, filter_: str, *, page_size: int, page_token: str = ""
                         ) -> JobPage:
        """One page of the region's CustomJobs that match FILTER_ (Vertex's list filter:
        display_name, state, create_time and labels; VERTEX_FACTS.md section 8), one call
        per page: the reconciler reads every unfinished job in a few calls this way
        (controlplane/runs/reconcile.py)."""

    @abc.abstractmethod
    def cancel_custom_job(self, name: str) -> None: ...

    @abc.abstractmethod
    def list_log_entries(
        self, filter_: str, *, page_size: int, page_token: str = "", order_by: str = "timestamp asc"
    ) -> LogPage: ...

    # HyperparameterTuningJobs (controlplane/sweeps): a backend that runs no sweeps says so.
    def create_tuning_job(self, tuning_job: dict[str, Any]) -> RemoteTuningJob:
        raise NotImplementedError(f"{type(self).__name__} does not run tuning jobs")

    def find_tuning_job(self, display_name: str, labels: dict[str, str]
                        ) -> RemoteTuningJob | None:
        """The tuning job an earlier try created with this display name and labels, if any."""
        raise NotImplementedError(f"{type(self).__name__} does not run tuning jobs")

    def get_tuning_job(self, name: str) -> RemoteTuningJob:
        raise NotImplementedError(f"{type(self).__name__} does not run tuning jobs")

    def cancel_tuning_job(self, name: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not run tuning jobs")

    # Cloud Monitoring's per-replica system metrics: a backend that has none answers none.
    def replica_metrics(self, job_id: str, start: datetime, end: datetime
                        ) -> list[ReplicaMetrics]:
        """The replicas of the CustomJob JOB_ID (its numeric id) with their system metrics
        between START and END, by replica name."""
        return []

    # TailLogEntries (streaming) is optional: only a backend that sets this supports it.
    supports_tail: bool = False

    def tail_log_entries(self, filter_: str, *, buffer_window_s: float = 2.0) -> TailStream:
        """Open a streaming session for entries matching the filter from now on."""
        raise NotImplementedError(f"{type(self).__name__} does not support TailLogEntries")


@cache
def get_backend() -> Backend:
    return import_string(settings.CP_BACKEND)()
