"""The OpenAPI schema tells what the server answers, refusals included.

drf-spectacular documents each operation's success; this AutoSchema adds the answers every
API view can give besides it, each with its body:

    400  the errors keyed by field (``FieldErrors``): writes, and reads that take a query
    401  no or a bad credential; 403  the caller's role or token does not allow it
    404  a path parameter (or an id in a write's body) names nothing the caller can see
    409  an ``Idempotency-Key`` reused with another request (controlplane.core.idempotency),
         or what the view's ``conflicts`` attribute says (a state that forbids the change)
    502  what the view's ``upstream`` attribute says (a Google service it calls failed)
    429  over the rate limit, with ``Retry-After``

and the ``Idempotency-Key`` header on the operations that take one. A request body that the
server reads with a StrictSerializer is ``additionalProperties: false``, as it refuses unknown
keys. Each operation's one-line summary comes from controlplane.core.openapi_summaries.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.plumbing import ResolvedComponent, force_instance
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer

from controlplane.core import idempotency
from controlplane.core.openapi_summaries import SUMMARIES
from controlplane.core.serializers import StrictSerializer

FIELD_ERRORS = {
    "type": "object",
    "description": "What was refused, keyed by the field (a nested field is a nested object, "
                   "or a dotted path for a Vertex CustomJob); each value lists the problems and "
                   "what would be valid. A refusal that concerns no one field is keyed "
                   "`non_field_errors` or `detail`.",
    "additionalProperties": {},
    "example": {"chief": {"accelerator_count": ["a2-highgpu-4g takes 4 NVIDIA_TESLA_A100, "
                                                "not 3"]}},
}
DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
    "example": {"detail": "Not found."},
}
IDEMPOTENCY_PARAMETER = OpenApiParameter(
    idempotency.HEADER, OpenApiTypes.STR, OpenApiParameter.HEADER, required=False,
    description="Makes a retry safe: the same key with the same request within 24 hours "
                "returns the first answer (and `Idempotent-Replayed: true`) instead of creating "
                "again; with a different request it is a 409. 1 to 255 printable ASCII "
                "characters, e.g. a UUID; keys are per user.",
    pattern=r"^[!-~]{1,255}$",
)
WRITES = {"POST", "PUT", "PATCH"}


class AutoSchema(openapi.AutoSchema):
    def get_summary(self) -> str | None:
        # @extend_schema(summary=...) overrides this method on a subclass, and so wins.
        return SUMMARIES.get(self.get_operation_id()) or super().get_summary()

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        schema = super()._map_basic_serializer(serializer, direction)
        strict = isinstance(serializer, StrictSerializer) or (
            isinstance(serializer, type) and issubclass(serializer, StrictSerializer))
        if direction == "request" and strict:
            # The server refuses unknown keys (StrictSerializer): so does the schema.
            schema["additionalProperties"] = False
        return schema

    def get_override_parameters(self) -> list[Any]:
        parameters = list(super().get_override_parameters())
        if self._idempotent():
            parameters.append(IDEMPOTENCY_PARAMETER)
        return parameters

    def _get_request_for_media_type(self, serializer: Any, direction: Any = "request"
                                    ) -> tuple[Any, bool]:
        schema, required = super()._get_request_for_media_type(serializer, direction)
        if not required and isinstance(serializer, PolymorphicProxySerializer):
            # One of several bodies (a job request or a CustomJob): required when each is.
            forms = serializer.serializers
            forms = forms.values() if isinstance(forms, dict) else forms
            required = all(any(f.required for f in force_instance(form).fields.values())
                           for form in forms)
        return schema, required

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, (description, schema) in self._refusals().items():
            responses.setdefault(code, {
                "description": description,
                "content": {"application/json": {"schema": schema}},
            })
        return responses

    def _refusals(self) -> dict[str, tuple[str, dict[str, Any]]]:
        field_errors = self._component("FieldErrors", FIELD_ERRORS)
        detail = self._component("Detail", DETAIL)
        refusals: dict[str, tuple[str, dict[str, Any]]] = {}
        if self.method in WRITES or self._takes_query():
            refusals["400"] = ("Refused: the errors keyed by field; nothing was changed.",
                               field_errors)
        if self.get_auth():
            refusals["401"] = ("No credential, or one that is not valid.", detail)
            refusals["403"] = ("The caller's role or token does not allow this.", detail)
        not_found = getattr(self.view, "not_found", "")  # a query naming what may not exist
        if "{" in self.path or self.method in WRITES or not_found:
            refusals["404"] = (not_found or "Nothing of that id (in the path, or named by the "
                               "body) that the caller can see.", detail)
        conflicts = getattr(self.view, "conflicts", "")
        if self._idempotent() or conflicts:
            why = " ".join(filter(None, [
                conflicts, self._idempotent() and "The Idempotency-Key was used with a "
                                                  "different request."]))
            refusals["409"] = (why, field_errors)
        refusals["429"] = ("Too many requests; retry after Retry-After seconds.", detail)
        upstream = getattr(self.view, "upstream", "")
        if upstream:
            refusals["502"] = (upstream, detail)
        return refusals

    def _takes_query(self) -> bool:
        if self._get_paginator() is not None and self._is_list_view():
            return True
        # self's, not super()'s: @extend_schema's parameters live on a subclass of this one.
        return any(getattr(p, "location", None) == OpenApiParameter.QUERY
                   for p in self.get_override_parameters())

    def _idempotent(self) -> bool:
        handler = getattr(self.view, (self.method or "").lower(), None)
        return bool(getattr(handler, idempotency.MARK, False))

    def _component(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, schema=schema,
                                      object=name)
        self.registry.register_on_missing(component)
        return component.ref
