"""google.logging.v2.LoggingServiceV2: ListLogEntries, WriteLogEntries, TailLogEntries."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import Counter

import grpc
from google.cloud.logging_v2 import types as logging_types
from google.rpc import error_details_pb2

from localvertex.cloudlogging.entries import JOB_RESOURCE, LogEntryPb, from_pb, project_of_log_name
from localvertex.cloudlogging.filter import SqlFilter, compile_filter
from localvertex.cloudlogging.read_quota import SlidingWindowLimiter
from localvertex.cloudlogging.store import Cursor, LogStore
from localvertex.core.errors import ApiError, invalid, permission_denied
from localvertex.core.filters import FilterError
from localvertex.core.timeutil import MonotonicClock, to_timestamp

SERVICE = "google.logging.v2.LoggingServiceV2"

ListLogEntriesRequest = logging_types.ListLogEntriesRequest.pb()
ListLogEntriesResponse = logging_types.ListLogEntriesResponse.pb()
WriteLogEntriesRequest = logging_types.WriteLogEntriesRequest.pb()
WriteLogEntriesResponse = logging_types.WriteLogEntriesResponse.pb()
TailLogEntriesRequest = logging_types.TailLogEntriesRequest.pb()
TailLogEntriesResponse = logging_types.TailLogEntriesResponse.pb()

_PROJECT = re.compile(r"^projects/([^/]+)$")
MAX_RESOURCE_NAMES = 100
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
# TailLogEntries: buffer_window defaults to 2 s and may be up to 60 s; 10 sessions per project.
DEFAULT_BUFFER_WINDOW_S = 2.0
MAX_BUFFER_WINDOW_S = 60.0
MIN_POLL_S = 0.2
MAX_TAIL_SESSIONS = 10
_TAIL_BATCH = 1000


def _projects(resource_names) -> list[str]:
    if not resource_names:
        raise invalid("resource_names is required.")
    if len(resource_names) > MAX_RESOURCE_NAMES:
        raise invalid(f"At most {MAX_RESOURCE_NAMES} resource_names are allowed.")
    projects = []
    for name in resource_names:
        m = _PROJECT.match(name)
        if not m:
            raise invalid(
                f"Unsupported resource name {name!r}: the emulator serves projects/PROJECT only."
            )
        projects.append(m.group(1))
    return sorted(set(projects))


def _compile(text: str) -> SqlFilter:
    try:
        return compile_filter(text)
    except FilterError as exc:
        raise invalid(f"Invalid filter: {exc}") from exc


def quota_error(project: str) -> ApiError:
    # Worded as Google words it, with the ErrorInfo Google attaches.
    message = (
        "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' "
        f"of service 'logging.googleapis.com' for consumer 'project_number:{project}'."
    )
    info = error_details_pb2.ErrorInfo(
        reason="RATE_LIMIT_EXCEEDED",
        domain="googleapis.com",
        metadata={
            "consumer": f"projects/{project}",
            "quota_metric": "logging.googleapis.com/read_requests",
            "quota_limit": "ReadRequestsPerMinutePerProject",
            "service": "logging.googleapis.com",
        },
    )
    return ApiError(grpc.StatusCode.RESOURCE_EXHAUSTED, message, [info])


class LoggingService:
    def __init__(
        self, logs: LogStore, clock: MonotonicClock, quota_per_minute: int,
        accept_job_writes: bool = False,
    ) -> None:
        self.logs = logs
        self.accept_job_writes = accept_job_writes
        self.clock = clock
        self.quota = SlidingWindowLimiter(quota_per_minute)
        self._tails: Counter[str] = Counter()
        self._tail_lock = threading.Lock()
        self.stopping = threading.Event()

    # -- ListLogEntries --------------------------------------------------------------------

    def list_log_entries(self, request, context: grpc.ServicerContext):
        projects = _projects(request.resource_names)
        for project in projects:
            if not self.quota.allow(project):
                raise quota_error(project)
        order = " ".join(request.order_by.lower().split())
        if order not in ("", "timestamp asc", "timestamp desc"):
            raise invalid(
                f"Invalid order_by {request.order_by!r}: use 'timestamp asc' or 'timestamp desc'."
            )
        descending = order == "timestamp desc"
        where = _compile(request.filter)
        size = request.page_size if request.page_size > 0 else DEFAULT_PAGE_SIZE
        size = min(size, MAX_PAGE_SIZE)
        query_key = hashlib.sha256(
            json.dumps([projects, request.filter, descending]).encode()
        ).hexdigest()[:16]
        after = _decode_token(request.page_token, query_key) if request.page_token else None
        page = self.logs.page(projects, where, descending=descending, page_size=size, after=after)
        response = ListLogEntriesResponse()
        for blob in page.blobs:
            response.entries.add().MergeFromString(blob)
        if page.more and page.last is not None:
            response.next_page_token = _encode_token(page.last, query_key)
        return response

    # -- WriteLogEntries -------------------------------------------------------------------

    def write_log_entries(self, request, context: grpc.ServicerContext):
        stored = []
        for i, given in enumerate(request.entries):
            entry = LogEntryPb()
            entry.CopyFrom(given)
            if not entry.log_name:
                entry.log_name = request.log_name
            if not entry.HasField("resource"):
                if request.HasField("resource"):
                    entry.resource.CopyFrom(request.resource)
                else:
                    entry.resource.type = "global"
            self._check_writable(i, entry)
            for key, value in request.labels.items():
                if key not in entry.labels:
                    entry.labels[key] = value
            now = self.clock.now_ns()
            if not entry.HasField("timestamp"):
                entry.timestamp.CopyFrom(to_timestamp(now))
            entry.receive_timestamp.CopyFrom(to_timestamp(now))
            if not entry.insert_id:
                entry.insert_id = self.logs.next_insert_id()
            if project_of_log_name(entry.log_name) is None:
                raise invalid(
                    f"entries[{i}].log_name {entry.log_name!r} is not projects/PROJECT/logs/LOG_ID"
                    " (and the request has no log_name)."
                )
            stored.append(from_pb(entry))
        if not request.dry_run:
            for item in stored:
                self.logs.append(item)
            # Written entries are readable when the call returns.
            self.logs.flush(timeout=10)
        return WriteLogEntriesResponse()

    def _check_writable(self, index: int, entry) -> None:
        """A training job's log (`ml_job`) is written by the emulator alone, from what its
        replicas print (JobManager.log_line appends to the store directly), as on Vertex by
        its service agent alone: a job's own service account has no right to write entries for
        another job. So a replica calling this API cannot plant steps, checkpoints or failures
        in any job's log; the whole request is refused and nothing is written."""
        if entry.resource.type == JOB_RESOURCE and not self.accept_job_writes:
            raise permission_denied(
                f"Permission 'logging.logEntries.create' denied for entries[{index}]: entries "
                f"of resource type {JOB_RESOURCE!r} are written by Vertex AI from "
                "the job's replicas' output only; write your own entries to another resource "
                "type (e.g. 'global').")

    # -- TailLogEntries --------------------------------------------------------------------

    def tail_log_entries(self, request_iterator, context: grpc.ServicerContext):
        first = next(request_iterator, None)
        if first is None:
            return
        projects = _projects(first.resource_names)
        where = _compile(first.filter)
        window = DEFAULT_BUFFER_WINDOW_S
        if first.HasField("buffer_window"):
            window = first.buffer_window.seconds + first.buffer_window.nanos / 1e9
            if not 0 <= window <= MAX_BUFFER_WINDOW_S:
                raise invalid("buffer_window must be between 0 and 60 seconds.")
        with self._tail_lock:
            full = [p for p in projects if self._tails[p] >= MAX_TAIL_SESSIONS]
            if full:
                raise ApiError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"Too many open TailLogEntries sessions for project {full[0]}"
                    f" (the limit is {MAX_TAIL_SESSIONS}).",
                )
            self._tails.update(projects)
        try:
            yield from self._tail(projects, where, max(window, MIN_POLL_S), context)
        finally:
            with self._tail_lock:
                self._tails.subtract(projects)

    def _tail(self, projects: list[str], where: SqlFilter, poll_s: float, context):
        # A tail starts at the present: entries stored from now on.
        cursor = self.logs.last_rowid()
        # An empty first response confirms the session at once: google-api-core's stream
        # wrapper waits for a first response before the GAPIC call even returns.
        yield TailLogEntriesResponse()
        while context.is_active() and not self.stopping.wait(poll_s):
            while True:
                rows = self.logs.newer_than(cursor, projects, where, _TAIL_BATCH)
                if not rows:
                    break
                cursor = rows[-1][0]
                response = TailLogEntriesResponse()
                # Within the buffer window entries are delivered in timestamp order.
                for _, _, blob in sorted(rows, key=lambda row: (row[1], row[0])):
                    response.entries.add().MergeFromString(blob)
                yield response
                if len(rows) < _TAIL_BATCH:
                    break

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "ListLogEntries": (self.list_log_entries, ListLogEntriesRequest),
            "WriteLogEntries": (self.write_log_entries, WriteLogEntriesRequest),
        }

    def streaming_methods(self) -> dict[str, tuple[object, object]]:
        return {"TailLogEntries": (self.tail_log_entries, TailLogEntriesRequest)}


def _encode_token(cursor: Cursor, query_key: str) -> str:
    raw = json.dumps(
        {"t": cursor.timestamp_ns, "i": cursor.insert_id, "r": cursor.rowid, "q": query_key}
    ).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str, query_key: str) -> Cursor:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        cursor = Cursor(int(data["t"]), str(data["i"]), int(data["r"]))
        key = data["q"]
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid("Invalid page_token.") from exc
    if key != query_key:
        raise invalid("page_token does not match the request's resource names and filter.")
    return cursor
