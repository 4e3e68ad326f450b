"""The REST API's paging: limit and offset, with a ceiling on the limit.

Without one, `?limit=10000000` makes one request serialize a team's whole history; a script
that wants everything pages through it instead. A limit above the ceiling is served as the
ceiling (the page says so in its `next` link); a limit or offset that is not a whole number in
range is a 400 naming the parameter, as the schema documents (the default paginator would
quietly fall back to its defaults).
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

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
