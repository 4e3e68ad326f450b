"""v1beta1 of a service, answered by its v1 implementation.

Google's preview SDK surfaces (`aiplatform.preview.persistent_resource`, `vertex_ray`) call
google.cloud.aiplatform.v1beta1. A v1beta1 message and its v1 namesake share the wire format of
their shared fields (same numbers and types), so a request is converted by parsing its bytes as
the v1 message, and an answer by parsing the v1 answer's bytes as the v1beta1 message. A field
only v1beta1 has would arrive as an unknown field of the v1 message: it is refused, named,
rather than dropped. Long-running operations carry their messages in Any, whose type URL names
the version: an operation started through v1beta1 names v1beta1 types, now and when it is
polled later (core/operations.py keeps that).
"""

from __future__ import annotations

from collections.abc import Callable

from google.cloud import aiplatform_v1beta1
from google.longrunning import operations_pb2
from google.protobuf import any_pb2, message
from google.protobuf.unknown_fields import UnknownFieldSet

from localvertex.core.errors import invalid

V1 = ".aiplatform.v1."
V1BETA1 = ".aiplatform.v1beta1."

Methods = dict[str, tuple[Callable, type]]


def v1beta1_service(service: str, methods: Methods,
                    mark_operation: Callable[[str], None]) -> tuple[str, Methods]:
    """The v1beta1 name of a v1 `service` and its methods, each converting its request to v1,
    calling the v1 handler and converting the answer back. `mark_operation` is told the name
    of each operation a method starts, so that polling it answers v1beta1 types too."""
    beta_methods: Methods = {}
    for name, (handler, v1_request) in methods.items():
        beta_request = getattr(aiplatform_v1beta1, v1_request.DESCRIPTOR.name).pb()
        beta_methods[name] = (_beta_handler(handler, v1_request, mark_operation), beta_request)
    return service.replace(V1, V1BETA1), beta_methods


def _beta_handler(handler: Callable, v1_request: type,
                  mark_operation: Callable[[str], None]) -> Callable:
    def handle(request: message.Message, context):
        answer = handler(to_v1(request, v1_request), context)
        if isinstance(answer, operations_pb2.Operation):
            mark_operation(answer.name)
            return as_v1beta1_operation(answer)
        beta = getattr(aiplatform_v1beta1, answer.DESCRIPTOR.name, None)
        if beta is None:  # not an aiplatform message (google.protobuf.Empty, ...)
            return answer
        return beta.pb().FromString(answer.SerializeToString())

    return handle


def to_v1(beta: message.Message, v1_cls: type) -> message.Message:
    """The v1 message of a v1beta1 one; INVALID_ARGUMENT naming any field v1 does not have."""
    v1 = v1_cls.FromString(beta.SerializeToString())
    unknown = _unknown_fields(v1, beta, "")
    if unknown:
        raise invalid(
            f"{', '.join(unknown)}: only in v1beta1; the emulator serves v1beta1 with its v1 "
            "implementation, which has no such field. Leave it unset.")
    return v1


def _unknown_fields(v1: message.Message, beta: message.Message, path: str) -> list[str]:
    names = []
    for number in dict.fromkeys(entry.field_number for entry in UnknownFieldSet(v1)):
        field = beta.DESCRIPTOR.fields_by_number.get(number)
        names.append(f"{path}{field.name if field else number}")
    for field, value in v1.ListFields():
        if field.message_type is None:
            continue
        beta_value = getattr(beta, field.name)
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for key in value:
                    names += _unknown_fields(value[key], beta_value[key],
                                             f"{path}{field.name}[{key!r}].")
        elif field.is_repeated:
            for i, (item, beta_item) in enumerate(zip(value, beta_value, strict=True)):
                names += _unknown_fields(item, beta_item, f"{path}{field.name}[{i}].")
        else:
            names += _unknown_fields(value, beta_value, f"{path}{field.name}.")
    return names


def as_v1beta1_operation(op: operations_pb2.Operation) -> operations_pb2.Operation:
    """A copy of `op` whose metadata and response name v1beta1 types."""
    beta = operations_pb2.Operation()
    beta.CopyFrom(op)
    to_v1beta1_any(beta.metadata)
    if beta.HasField("response"):
        to_v1beta1_any(beta.response)
    return beta


def to_v1beta1_any(value: any_pb2.Any) -> None:
    """Name the v1beta1 type of an Any holding an aiplatform v1 message (the bytes are the
    same)."""
    value.type_url = value.type_url.replace(V1, V1BETA1)


def is_v1beta1(op: operations_pb2.Operation) -> bool:
    return V1BETA1 in op.metadata.type_url
