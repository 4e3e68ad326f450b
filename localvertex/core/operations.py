"""Long-running operations of the Model, Endpoint and PersistentResource services, and
google.longrunning.Operations/GetOperation, which answers for all of them.

Creating an endpoint or uploading a model finishes at once (a done Operation, as the emulator
returns for DeleteCustomJob); deploying, undeploying, resizing and provisioning run on a thread
and finish when the replicas or nodes are ready or stopped, so clients poll GetOperation as
they do on Vertex. Operations are kept with the resources (objects.py). One started through a
v1beta1 service names v1beta1 types in its Anys, when it is started and when it is polled
(api_versions.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from google.longrunning import operations_pb2
from google.protobuf import message
from google.rpc import status_pb2

from localvertex.core.api_versions import is_v1beta1, to_v1beta1_any
from localvertex.core.errors import ApiError, not_found
from localvertex.core.objects import object_store
from localvertex.core.timeutil import to_timestamp

log = logging.getLogger(__name__)

SERVICE = "google.longrunning.Operations"
GetOperationRequest = operations_pb2.GetOperationRequest


class Operations:
    def __init__(self, db_path: Path) -> None:
        self.store = object_store(db_path, "operation", operations_pb2.Operation)

    def close(self) -> None:
        self.store.close()

    def _name(self, parent: str) -> str:
        return f"{parent}/operations/{self.store.new_id()}"

    def done(
        self, parent: str, metadata: message.Message, response: message.Message
    ) -> operations_pb2.Operation:
        """A finished operation (what fast calls return)."""
        _stamp(metadata, finished=True)
        op = operations_pb2.Operation(name=self._name(parent), done=True)
        op.metadata.Pack(metadata)
        op.response.Pack(response)
        self.store.put(op)
        return op

    def run(
        self,
        parent: str,
        metadata: message.Message,
        work: Callable[[], message.Message],
        what: str,
    ) -> operations_pb2.Operation:
        """Start `work` on a thread; the operation is done when it returns (its response) or
        raises (an ApiError keeps its code; anything else is INTERNAL)."""
        _stamp(metadata, finished=False)
        op = operations_pb2.Operation(name=self._name(parent), done=False)
        op.metadata.Pack(metadata)
        self.store.put(op)

        def target() -> None:
            try:
                response = work()
            except ApiError as exc:
                self._finish(op.name, metadata, error=(exc.code, exc.message))
            except Exception as exc:
                log.exception("%s failed", what)
                self._finish(op.name, metadata, error=(grpc.StatusCode.INTERNAL, str(exc)))
            else:
                self._finish(op.name, metadata, response=response)

        threading.Thread(target=target, name=what, daemon=True).start()
        return op

    def _finish(
        self,
        name: str,
        metadata: message.Message,
        response: message.Message | None = None,
        error: tuple[grpc.StatusCode, str] | None = None,
    ) -> None:
        _stamp(metadata, finished=True)

        def change(op: operations_pb2.Operation) -> None:
            beta = is_v1beta1(op)
            op.done = True
            op.metadata.Pack(metadata)
            if error is not None:
                op.error.CopyFrom(status_pb2.Status(code=error[0].value[0], message=error[1]))
            elif response is not None:
                op.response.Pack(response)
            if beta:
                _to_v1beta1(op)

        self.store.update(name, change)

    def mark_v1beta1(self, name: str) -> None:
        """The operation was started through a v1beta1 service: its Anys name v1beta1 types
        from now on (those the work packs when it ends too)."""
        self.store.update(name, _to_v1beta1)

    def abandon_unfinished(self) -> int:
        """Operations an earlier emulator left running end as ABORTED (their threads are gone)."""
        count = 0
        for op in self.store.select():
            if op.done:
                continue

            def change(o: operations_pb2.Operation) -> None:
                o.done = True
                o.error.CopyFrom(
                    status_pb2.Status(
                        code=grpc.StatusCode.ABORTED.value[0],
                        message="The emulator restarted while this operation ran.",
                    )
                )

            self.store.update(op.name, change)
            count += 1
        return count

    def get_operation(self, request, context: grpc.ServicerContext):
        op = self.store.get(request.name)
        if op is None:
            raise not_found(f"Operation {request.name} not found.")
        return op

    def methods(self) -> dict[str, tuple[object, object]]:
        return {"GetOperation": (self.get_operation, GetOperationRequest)}


def _to_v1beta1(op: operations_pb2.Operation) -> None:
    to_v1beta1_any(op.metadata)
    if op.HasField("response"):
        to_v1beta1_any(op.response)


def _stamp(metadata: message.Message, finished: bool) -> None:
    """Set generic_metadata's create/update times, for metadata types that have them."""
    if "generic_metadata" not in metadata.DESCRIPTOR.fields_by_name:
        return
    generic = metadata.generic_metadata  # type: ignore[attr-defined]
    now = to_timestamp(time.time_ns())
    if not generic.HasField("create_time"):
        generic.create_time.CopyFrom(now)
    if finished:
        generic.update_time.CopyFrom(now)
