"""What JobService's collections, CustomJobs and HyperparameterTuningJobs, answer alike: a new
resource's name, state and times; Get by full name; List with Vertex's filter (filter.py),
newest first, in pages whose token holds the last id and is bound to the parent and filter;
Cancel's first step (CANCELLING, for the job's runner to finish); and Delete of a finished
resource, a done long-running operation. The codes and messages are Vertex's."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from google.cloud import aiplatform_v1
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2

from localvertex.core.errors import failed_precondition, invalid, not_found
from localvertex.core.filters import FilterError
from localvertex.core.resources import parse_parent
from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.filter import compile_job_filter
from localvertex.jobs.store import JobState, Record, RecordStore

DeleteOperationMetadata = aiplatform_v1.DeleteOperationMetadata.pb()
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
# Records read from the store at once while a List fills its page.
READ_CHUNK = 200

R = TypeVar("R", bound=Record)


def to_cancelling(record: Record) -> None:
    """A cancel's first step, for the job's runner to finish: CANCELLING, unless the job has
    ended or is cancelling already."""
    if not record.terminal and record.state != JobState.JOB_STATE_CANCELLING:
        record.job.state = JobState.JOB_STATE_CANCELLING
        record.job.update_time.CopyFrom(to_timestamp(time.time_ns()))


class Collection(Generic[R]):
    """One of JobService's collections: `kind` as messages name it ("CustomJob"), `collection`
    as resource names hold it ("customJobs"), its records, and where operation ids come from.
    `token_key` starts each page token's binding to its request, so a token of one collection
    is refused by the other. `states` is the enum of its resources' states (PipelineState for
    TrainingPipelines, whose terminal states have JobState's numbers)."""

    def __init__(self, kind: str, collection: str, store: RecordStore[R],
                 operation_ids: Callable[[], str], token_key: str = "",
                 states: type = JobState) -> None:
        self.kind = kind
        self.states = states
        self.collection = collection
        self.store = store
        self._operation_ids = operation_ids
        self._token_key = token_key
        self._name = re.compile(rf"^projects/([^/]+)/locations/([^/]+)/{collection}/([^/]+)$")

    def stamp_new(self, message: Any, parent: str, resource_id: str, state: int) -> None:
        """Name a new resource under `parent` and set its first state and times."""
        now = to_timestamp(time.time_ns())
        message.name = f"{parent}/{self.collection}/{resource_id}"
        message.state = state
        message.create_time.CopyFrom(now)
        message.update_time.CopyFrom(now)

    def load(self, name: str) -> R:
        m = self._name.match(name)
        if not m:
            raise invalid(
                f"name {name!r} is not projects/PROJECT/locations/LOCATION/{self.collection}/ID.")
        record = self.store.get(m.group(3))
        if record is None or (record.project, record.location) != (m.group(1), m.group(2)):
            raise not_found(f'{self.kind} "{name}" not found.')
        return record

    def page(self, request: Any) -> tuple[list[R], str]:
        """The records on the page a List request asks for, and the next page's token ("" on
        the last)."""
        project, location = parse_parent(request.parent)
        try:
            predicate = compile_job_filter(request.filter, self.states)
        except FilterError as exc:
            raise invalid(f"Invalid filter: {exc}") from exc
        binding = f"{self._token_key}{request.parent}\n{request.filter}"
        query_key = hashlib.sha256(binding.encode()).hexdigest()[:16]
        after = _decode_token(request.page_token, query_key) if request.page_token else None
        size = min(request.page_size if request.page_size > 0 else DEFAULT_PAGE_SIZE,
                   MAX_PAGE_SIZE)
        # A chunk at a time until one match more than the page holds (that one says a next
        # page exists): reading a whole history of pages decodes each record once, not once
        # per page.
        chunk = max(size + 1, READ_CHUNK)
        records: list[R] = []
        before = after
        while len(records) <= size:
            rows = self.store.list_before(project, location, before, chunk)
            records.extend(r for r in rows if predicate(r.job))
            if len(rows) < chunk:
                break
            before = int(rows[-1].id)
        token = _encode_token(int(records[size - 1].id), query_key) if len(records) > size \
            else ""
        return records[:size], token

    def cancel(self, name: str) -> R:
        """Move the resource to CANCELLING; FAILED_PRECONDITION once it has ended."""
        record = self.load(name)

        def change(r: R) -> None:
            if r.terminal:
                raise failed_precondition(f"{self.kind} {name} is in state "
                                          f"{self.states(r.state).name} and cannot be cancelled.")
            to_cancelling(r)

        return self.store.update(record.id, change)

    def delete(self, name: str) -> operations_pb2.Operation:
        """Delete a finished resource: a done operation; FAILED_PRECONDITION before its end."""
        record = self.load(name)
        if not record.terminal:
            raise failed_precondition(
                f"{self.kind} {name} is in state {self.states(record.state).name}; only a finished "
                "job can be deleted. Cancel it first.")
        self.store.delete(record.id)
        now = to_timestamp(time.time_ns())
        metadata = DeleteOperationMetadata()
        metadata.generic_metadata.create_time.CopyFrom(now)
        metadata.generic_metadata.update_time.CopyFrom(now)
        operation = operations_pb2.Operation(
            name=f"projects/{record.project}/locations/{record.location}/operations/"
            f"{self._operation_ids()}", done=True)
        operation.metadata.Pack(metadata)
        operation.response.Pack(empty_pb2.Empty())
        return operation


def _encode_token(after_id: int, query_key: str) -> str:
    raw = json.dumps({"a": after_id, "q": query_key}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str, query_key: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        after, key = int(data["a"]), data["q"]
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid("Invalid page_token.") from exc
    if key != query_key:
        raise invalid("page_token does not match the request's parent and filter.")
    return after
