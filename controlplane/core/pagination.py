"""The REST API's paging: limit and offset, with a ceiling on the limit; and, for long lists
(the jobs), a cursor that needs no count.

Without one, `?limit=10000000` makes one request serialize a team's whole history; a script
that wants everything pages through it instead. A limit above the ceiling is served as the
ceiling (the page says so in its `next` link); a limit or offset that is not a whole number in
range is a 400 naming the parameter, as the schema documents (the default paginator would
quietly fall back to its defaults).

Limit/offset answers with the total `count`, which PostgreSQL can only get by visiting every
matching row unless the view keeps a count of its own (the jobs' tally:
controlplane/runs/counts.py), and an offset makes it walk past every row before the page;
both grow with a team's history. `?cursor=` (empty for the first page, then each answer's
`next`) pages by keyset instead: the page after the last row seen, found through the list's
index, no count.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime
from typing import Any

from django.db.models import Model, Q, QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

WHOLE = re.compile(r"[0-9]{1,18}")
MAX_WHOLE = 10**18 - 1  # within a PostgreSQL bigint


class CappedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000

    def get_limit(self, request: Request) -> int | None:
        raw = _one(request, self.limit_query_param)
        if raw is None:
            return self.default_limit
        return min(_whole(self.limit_query_param, raw, minimum=1), self.max_limit)

    def get_offset(self, request: Request) -> int:
        raw = _one(request, self.offset_query_param)
        return 0 if raw is None else _whole(self.offset_query_param, raw, minimum=0)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(minimum=1, maximum=MAX_WHOLE)
                parameter["description"] = (f"Rows per page, default {self.default_limit}; "
                                            f"more than {self.max_limit} is served as "
                                            f"{self.max_limit}.")
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0, maximum=MAX_WHOLE)
        return parameters


def _one(request: Request, name: str) -> str | None:
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise ValidationError({name: ["give it once"]})
    return values[0] if values else None


def _whole(name: str, raw: str, *, minimum: int) -> int:
    # Digits only: int() would also take " 5", "+5" and "1_0", which the schema does not.
    if not WHOLE.fullmatch(raw) or int(raw) < minimum:
        raise ValidationError({name: [f"a whole number, at least {minimum}"]})
    return int(raw)


class KeysetOrOffsetPagination(CappedLimitOffsetPagination):
    """Limit/offset as everywhere (with `count`), or, when the request gives `cursor`, the
    rows after the cursor's, newest first by (created_at, id): `{"next", "results"}` with no
    count. The cursor only says where the last page ended; the rows are still the view's own
    (a team's jobs), so a cursor made up by hand can only move within them."""

    cursor_query_param = "cursor"
    cursor_error = "a cursor this API gave in `next` (or empty, for the first page)"

    def paginate_queryset(self, queryset: QuerySet[Any], request: Request,
                          view: Any = None) -> list[Any] | None:
        raw = _one(request, self.cursor_query_param)
        self.by_cursor = raw is not None
        if raw is None:
            self.view = view
            return super().paginate_queryset(queryset, request, view)
        if _one(request, self.offset_query_param) is not None:
            raise ValidationError({self.offset_query_param: [
                f"give {self.offset_query_param} or {self.cursor_query_param}, not both"]})
        self.request = request
        self.limit = self.get_limit(request)
        jobs = queryset.order_by("-created_at", "-id")
        if raw:
            created_at, pk = _decode(raw, self.cursor_query_param, self.cursor_error)
            jobs = jobs.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, pk__lt=pk))
        rows = list(jobs[:self.limit + 1])
        page = rows[:self.limit]
        self.after = page[-1] if len(rows) > self.limit else None
        return page

    def get_count(self, queryset: QuerySet[Any]) -> int:
        """The view's own count where it keeps one that needs no scan (`counted()`, None
        where it cannot tell), else a count of the rows."""
        counted = getattr(getattr(self, "view", None), "counted", None)
        found = counted() if counted is not None else None
        return found if found is not None else super().get_count(queryset)

    def get_next_link(self) -> str | None:
        if not getattr(self, "by_cursor", False):
            return super().get_next_link()
        if self.after is None:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), self.offset_query_param)
        return replace_query_param(url, self.cursor_query_param, _encode(self.after))

    def get_paginated_response(self, data: Any) -> Response:
        if not self.by_cursor:
            return super().get_paginated_response(data)
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        response = super().get_paginated_response_schema(schema)
        response["required"] = ["results"]
        response["properties"]["count"]["description"] = (
            "Rows that match, all pages together: limit/offset paging only (absent when "
            "paging by cursor).")
        response["properties"]["previous"]["description"] = "limit/offset paging only"
        return response

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [*super().get_schema_operation_parameters(view), {
            "name": self.cursor_query_param, "required": False, "in": "query",
            "description": "Page by cursor instead of offset: empty for the first page, then "
                           "the `next` link of each answer (null after the last page). No "
                           "`count` is computed, so a long list pages in constant time. Not "
                           "with `offset`.",
            "schema": {"type": "string", "maxLength": 200},
        }]


def _encode(row: Model | dict[str, Any]) -> str:
    """Where a page ended: its last row's (created_at, id), the row a model or values()."""
    if isinstance(row, dict):
        created_at, pk = row["created_at"], row["id"]
    else:
        created_at, pk = row.created_at, row.pk  # type: ignore[attr-defined]
    position = f"{created_at.isoformat()}|{pk}"
    return base64.urlsafe_b64encode(position.encode()).decode().rstrip("=")


def _decode(raw: str, name: str, expected: str) -> tuple[datetime, int]:
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
        moment, pk = text.split("|")
        created_at = datetime.fromisoformat(moment)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValidationError({name: [expected]}) from exc
    if created_at.tzinfo is None or not WHOLE.fullmatch(pk):
        raise ValidationError({name: [expected]})
    return created_at, int(pk)
