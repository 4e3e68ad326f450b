"""Vertex AI through Google's own client libraries: the only module that imports them.

The same class talks to Google (`{region}-aiplatform.googleapis.com`, Application Default
Credentials) or to the local emulator (`VERTEX_EMULATOR_ADDR`, plaintext gRPC) depending on
settings alone; the requests on the wire are identical.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from django.conf import settings
from google.api_core import exceptions as gexc
from google.auth import exceptions as auth_exc
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport
from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
from google.cloud.logging_v2.services.logging_service_v2.transports import (
    LoggingServiceV2GrpcTransport,
)
from google.cloud.logging_v2.types import LogEntry as GLogEntry
from google.cloud.logging_v2.types import TailLogEntriesRequest
from google.protobuf.json_format import MessageToDict

from controlplane.backends import clients, errors
from controlplane.backends.base import (
    Backend,
    JobPage,
    LogPage,
    RemoteJob,
    RemoteTrial,
    RemoteTuningJob,
    ReplicaMetrics,
    TailBatch,
    TailStream,
)
from controlplane.backends.system_metrics import SystemMetricsReader
from vertexplan.logparse.entries import LogEntry

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Status codes that say "the same call may work later".
_TRANSIENT = (
    gexc.ServiceUnavailable, gexc.DeadlineExceeded, gexc.InternalServerError, gexc.Aborted,
    gexc.GatewayTimeout, gexc.BadGateway, gexc.Unknown,
)


@contextmanager
def translated_errors(what: str) -> Iterator[None]:
    """Turn Google's exceptions into the app's own (controlplane/backends/errors.py)."""
    try:
        yield
    except gexc.ResourceExhausted as exc:
        if _request_rate_refusal(exc):
            raise errors.RateLimited(f"{what}: too many requests: {exc.message}",
                                     quota=_quota_metadata(exc)) from exc
        raise errors.QuotaExceeded(f"{what}: quota exceeded: {exc.message}",
                                   quota=_quota_metadata(exc)) from exc
    except _TRANSIENT as exc:
        raise errors.TransientBackendError(f"{what}: {exc.__class__.__name__}: {exc.message}") \
            from exc
    except gexc.InvalidArgument as exc:
        raise errors.InvalidJobSpec(f"{what}: {exc.message}") from exc
    except (gexc.PermissionDenied, gexc.Unauthenticated) as exc:
        raise errors.PermissionDenied(f"{what}: {exc.message}") from exc
    except auth_exc.DefaultCredentialsError as exc:
        raise errors.PermissionDenied(
            f"{what}: no Google credentials found (set up Application Default Credentials, "
            f"or VERTEX_EMULATOR_ADDR for the local emulator): {exc}"
        ) from exc
    except gexc.NotFound as exc:
        raise errors.NotFound(f"{what}: {exc.message}") from exc
    except gexc.FailedPrecondition as exc:
        raise errors.FailedPrecondition(f"{what}: {exc.message}") from exc
    except gexc.GoogleAPICallError as exc:
        raise errors.BackendError(f"{what}: {exc.__class__.__name__}: {exc.message}") from exc
    except grpc.RpcError as exc:  # a raw channel error the client did not wrap
        raise errors.TransientBackendError(f"{what}: {exc}") from exc


def _quota_metadata(exc: gexc.GoogleAPICallError) -> dict[str, str]:
    """The ErrorInfo metadata of a RESOURCE_EXHAUSTED answer that names a quota."""
    for detail in exc.details or ():
        metadata = getattr(detail, "metadata", None)
        if metadata is not None and "quota_metric" in metadata:
            return {str(k): str(v) for k, v in metadata.items()}
    return {}


# Vertex AI's own per-minute request quotas (resource management, job submission) refuse a call
# with this ErrorInfo reason; an accelerator quota refuses a job with another (the emulator's
# QUOTA_EXCEEDED). Cloud Logging's read quota says RATE_LIMIT_EXCEEDED too, for service
# logging.googleapis.com: the log follower paces itself on it as QuotaExceeded.
_RATE_REASON = "RATE_LIMIT_EXCEEDED"
_VERTEX_SERVICE = "aiplatform.googleapis.com"


def _request_rate_refusal(exc: gexc.GoogleAPICallError) -> bool:
    """Whether a RESOURCE_EXHAUSTED is Vertex's request rate quota, not a job's quota."""
    for detail in exc.details or ():
        metadata = getattr(detail, "metadata", None)
        if getattr(detail, "reason", None) == _RATE_REASON and metadata is not None and \
                metadata.get("service") == _VERTEX_SERVICE:
            return True
    return False


def _dt(value: Any) -> datetime | None:
    # proto-plus gives DatetimeWithNanoseconds, or a falsy epoch when the field is unset.
    if not value or (isinstance(value, datetime) and value.timestamp() == 0):
        return None
    return value


# The CustomJob fields _remote reads: a listing asks for these only (its read_mask), so a page
# of many jobs carries no job specs.
REMOTE_FIELDS = ("name", "display_name", "state", "labels", "create_time", "start_time",
                 "end_time", "error")


def _remote(job: aiplatform_v1.CustomJob) -> RemoteJob:
    return RemoteJob(
        name=job.name,
        display_name=job.display_name,
        state=job.state.name,
        labels=dict(job.labels),
        create_time=_dt(job.create_time),
        start_time=_dt(job.start_time),
        end_time=_dt(job.end_time),
        error_code=job.error.code if job.error else 0,
        error_message=job.error.message if job.error else "",
    )


def _plain_value(value: Any) -> Any:
    """A Trial parameter's protobuf Value: a number (integers as int) or a string."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _metrics(measurement: Any) -> dict[str, float]:
    return {m.metric_id: m.value for m in measurement.metrics}


def _trial(trial: aiplatform_v1.Trial) -> RemoteTrial:
    final = trial.final_measurement
    has_final = bool(final and final.metrics)
    return RemoteTrial(
        id=trial.id,
        state=trial.state.name,
        parameters={p.parameter_id: _plain_value(p.value) for p in trial.parameters},
        final_metrics=_metrics(final) if has_final else {},
        final_step=int(final.step_count) if has_final else None,
        measurements=[{"step": int(m.step_count), "metrics": _metrics(m)}
                      for m in trial.measurements],
        custom_job=trial.custom_job,
        infeasible_reason=trial.infeasible_reason,
        start_time=_dt(trial.start_time),
        end_time=_dt(trial.end_time),
    )


def _remote_tuning(job: aiplatform_v1.HyperparameterTuningJob) -> RemoteTuningJob:
    return RemoteTuningJob(
        name=job.name,
        display_name=job.display_name,
        state=job.state.name,
        labels=dict(job.labels),
        trials=[_trial(t) for t in job.trials],
        create_time=_dt(job.create_time),
        start_time=_dt(job.start_time),
        end_time=_dt(job.end_time),
        error_code=job.error.code if job.error else 0,
        error_message=job.error.message if job.error else "",
    )


def _log_entry(entry: GLogEntry) -> LogEntry:
    pb = GLogEntry.pb(entry)
    labels = pb.resource.labels
    return LogEntry(
        insert_id=pb.insert_id,
        timestamp=pb.timestamp.ToDatetime(tzinfo=UTC),
        severity=int(pb.severity),
        job_id=labels.get("job_id", ""),
        task_name=labels.get("task_name", ""),
        json_payload=MessageToDict(pb.json_payload) if pb.HasField("json_payload") else None,
        text_payload=pb.text_payload if pb.HasField("text_payload") else None,
        log_name=pb.log_name,
    )


# A tail session is long-lived; the follower reopens it when its set of jobs changes.
TAIL_SESSION_S = 3600.0


class _VertexTail(TailStream):
    """TailLogEntries over gRPC. The request stream stays open until cancel(): closing it
    would end the session on some servers."""

    def __init__(self, client: LoggingServiceV2Client, request: TailLogEntriesRequest) -> None:
        self._closed = threading.Event()
        self._cancelled = False

        def requests() -> Iterator[TailLogEntriesRequest]:
            yield request
            self._closed.wait()

        with translated_errors("TailLogEntries"):
            self._responses = client.tail_log_entries(
                requests=requests(), retry=None, timeout=TAIL_SESSION_S)

    def __iter__(self) -> Iterator[TailBatch]:
        try:
            with translated_errors("TailLogEntries"):
                for response in self._responses:
                    suppressed = sum(s.suppressed_count for s in response.suppression_info)
                    yield TailBatch([_log_entry(e) for e in response.entries], suppressed)
        except errors.BackendError:
            if not self._cancelled:
                raise
        finally:
            self._closed.set()

    def cancel(self) -> None:
        self._cancelled = True
        self._closed.set()
        self._responses.cancel()


class VertexBackend(Backend):
    """One region's Vertex AI (VERTEX_REGION unless given); `for_region` gives the backend of
    another, built once and kept, so a job can fail over between regions."""

    def __init__(self, region: str | None = None) -> None:
        self.project = settings.VERTEX_PROJECT
        self.region = region or settings.VERTEX_REGION
        self.timeout = settings.VERTEX_RPC_TIMEOUT_S
        channel = clients.emulator_channel()
        self.jobs = clients.google_client(aiplatform_v1.JobServiceClient,
                                          JobServiceGrpcTransport, channel, region=self.region)
        self.logs = clients.google_client(LoggingServiceV2Client, LoggingServiceV2GrpcTransport,
                                          channel, regional=False)
        self.parent = f"projects/{self.project}/locations/{self.region}"
        self._regions: dict[str, VertexBackend] = {self.region: self}
        self._regions_lock = threading.Lock()
        self._metrics: SystemMetricsReader | None = None  # made on first use

    def for_region(self, region: str) -> VertexBackend:
        with self._regions_lock:
            backend = self._regions.get(region)
            if backend is None:
                backend = self._regions[region] = type(self)(region)
            return backend

    def _call(self, what: str, fn: Callable[..., T], **kwargs: Any) -> T:
        # retry=None: retries are the tasks' decision (controlplane.core.queue.task), so a fault
        # surfaces at once instead of inside a hidden 60 s retry loop.
        with translated_errors(what):
            return fn(retry=None, timeout=self.timeout, **kwargs)

    def create_custom_job(self, custom_job: dict[str, Any]) -> RemoteJob:
        try:
            message = aiplatform_v1.CustomJob.from_json(json.dumps(custom_job))
        except Exception as exc:  # json_format.ParseError and friends
            raise errors.InvalidJobSpec(f"the CustomJob does not parse: {exc}") from exc
        job = self._call("CreateCustomJob", self.jobs.create_custom_job,
                         parent=self.parent, custom_job=message)
        return _remote(job)

    def find_custom_job(self, display_name: str, labels: dict[str, str]) -> RemoteJob | None:
        pager = self._call(
            "ListCustomJobs", self.jobs.list_custom_jobs,
            request={"parent": self.parent, "filter": f'display_name="{display_name}"'},
        )
        with translated_errors("ListCustomJobs"):
            for job in pager:
                if all(job.labels.get(k) == v for k, v in labels.items()):
                    return _remote(job)
        return None

    def get_custom_job(self, name: str) -> RemoteJob:
        return _remote(self._call("GetCustomJob", self.jobs.get_custom_job, name=name))

    def list_custom_jobs(self, filter_: str, *, page_size: int, page_token: str = ""
                         ) -> JobPage:
        pager = self._call("ListCustomJobs", self.jobs.list_custom_jobs, request={
            "parent": self.parent, "filter": filter_, "page_size": page_size,
            "page_token": page_token, "read_mask": {"paths": list(REMOTE_FIELDS)}})
        # One page per call (the pager would ask for the next one as it is iterated): the
        # reconciler counts and paces its calls against the region's request quota.
        with translated_errors("ListCustomJobs"):
            page = next(iter(pager.pages))
        return JobPage([_remote(job) for job in page.custom_jobs], page.next_page_token)

    def cancel_custom_job(self, name: str) -> None:
        self._call("CancelCustomJob", self.jobs.cancel_custom_job, name=name)

    def create_tuning_job(self, tuning_job: dict[str, Any]) -> RemoteTuningJob:
        try:
            message = aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(tuning_job))
        except Exception as exc:  # json_format.ParseError and friends
            raise errors.InvalidJobSpec(f"the HyperparameterTuningJob does not parse: {exc}") \
                from exc
        job = self._call("CreateHyperparameterTuningJob",
                         self.jobs.create_hyperparameter_tuning_job,
                         parent=self.parent, hyperparameter_tuning_job=message)
        return _remote_tuning(job)

    def find_tuning_job(self, display_name: str, labels: dict[str, str]
                        ) -> RemoteTuningJob | None:
        pager = self._call(
            "ListHyperparameterTuningJobs", self.jobs.list_hyperparameter_tuning_jobs,
            request={"parent": self.parent, "filter": f'display_name="{display_name}"'},
        )
        with translated_errors("ListHyperparameterTuningJobs"):
            for job in pager:
                if all(job.labels.get(k) == v for k, v in labels.items()):
                    # List leaves the trials out (VERTEX_FACTS.md A1): Get has them.
                    return self.get_tuning_job(job.name)
        return None

    def get_tuning_job(self, name: str) -> RemoteTuningJob:
        return _remote_tuning(self._call("GetHyperparameterTuningJob",
                                         self.jobs.get_hyperparameter_tuning_job, name=name))

    def cancel_tuning_job(self, name: str) -> None:
        self._call("CancelHyperparameterTuningJob", self.jobs.cancel_hyperparameter_tuning_job,
                   name=name)

    def list_log_entries(
        self, filter_: str, *, page_size: int, page_token: str = "", order_by: str = "timestamp asc"
    ) -> LogPage:
        request = {
            "resource_names": [f"projects/{self.project}"],
            "filter": filter_,
            "order_by": order_by,
            "page_size": page_size,
            "page_token": page_token,
        }
        pager = self._call("ListLogEntries", self.logs.list_log_entries, request=request)
        # One page per call: the follower paces its requests against the quota itself.
        with translated_errors("ListLogEntries"):
            page = next(iter(pager.pages))
        return LogPage([_log_entry(e) for e in page.entries], page.next_page_token)

    def replica_metrics(self, job_id: str, start: datetime, end: datetime
                        ) -> list[ReplicaMetrics]:
        # Made in here too: without credentials, Google's client refuses at construction.
        with translated_errors("ListTimeSeries"):
            with self._regions_lock:
                if self._metrics is None:
                    self._metrics = SystemMetricsReader(self.project)
            return self._metrics.read(job_id, start, end)

    supports_tail = True

    def tail_log_entries(self, filter_: str, *, buffer_window_s: float = 2.0) -> TailStream:
        seconds = int(buffer_window_s)
        request = TailLogEntriesRequest(
            resource_names=[f"projects/{self.project}"],
            filter=filter_,
            buffer_window={"seconds": seconds,
                           "nanos": round((buffer_window_s - seconds) * 1e9)},
        )
        return _VertexTail(self.logs, request)
