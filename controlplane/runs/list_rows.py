"""The API job list's rows, read as plain columns and written as JSON-ready dicts.

The list is the API's most asked read, and DRF's serializer costs about 0.2 ms a row there:
each of a row's twenty fields is looked up, typed and converted on its own, from a model
instance (three with select_related's team and user) built only to be read once. Here one
query gives the columns the row shows and each row is a dict built in one step.

`JobListSerializer.Meta.fields` is the one list of a row's fields, for both: the schema (the
OpenAPI document, the generated client) and these rows, which read each field from the column
of its name (or SOURCES'), written as DRF writes that column's type (`writer`). A field that is
neither a column nor one of COMPUTED stops the app at start; tests/runs/test_list_rows.py holds
both to the same output for every field.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models
from django.urls import reverse
from django.utils import timezone

from controlplane.runs import panels
from controlplane.runs.models import Job, JobState
from controlplane.runs.serializers import JobListSerializer

FIELDS: tuple[str, ...] = tuple(JobListSerializer.Meta.fields)
# A field read through a join, as values() names it (the serializer's SlugRelatedField and
# `source=`).
SOURCES = {"team": "team__slug", "created_by": "created_by__username"}
# Fields written from other figures than a column, per page (`rows`).
COMPUTED = frozenset({"url", "diagnosis"})


def moment(value: datetime | None) -> str | None:
    """A date-time as DRF's DateTimeField writes it: ISO 8601 in the current time zone, with
    UTC written as Z."""
    if value is None:
        return None
    text = value.astimezone(timezone.get_current_timezone()).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def writer(model: type[models.Model], field: str) -> Callable[[Any], Any] | None:
    """How DRF writes the model's column `field` into JSON where the value is not written as
    read: date-times as ISO 8601 text, floats as floats (None for the rest)."""
    try:
        column = model._meta.get_field(field)
    except FieldDoesNotExist as exc:
        raise ImproperlyConfigured(
            f"{model.__name__}.{field} is in the serializer's fields but not a column: "
            "write it in the fast rows too (list_rows.py, detail_body.py)") from exc
    if isinstance(column, models.DateTimeField):
        return moment
    if isinstance(column, models.FloatField):
        return _number
    return None


if stale := COMPUTED - set(FIELDS):
    raise ImproperlyConfigured(f"list_rows writes {sorted(stale)}, which JobListSerializer no "
                               "longer lists")
COLUMNS = tuple(dict.fromkeys(["id", "state", *(SOURCES.get(f, f) for f in FIELDS
                                                 if f not in COMPUTED)]))
# A page's row is read in one step, the fields in the serializer's order (a computed field
# holds its place with the id until it is written), then the few that need writing are.
_READ = operator.itemgetter(*("id" if f in COMPUTED else SOURCES.get(f, f) for f in FIELDS))
_WRITTEN = tuple((f, w) for f in FIELDS
                 if f not in COMPUTED and f not in SOURCES and (w := writer(Job, f)) is not None)


def rows(page: Sequence[dict[str, Any]], request: Any) -> list[dict[str, Any]]:
    """The list's rows for a page of COLUMNS values, in the serializer's field order."""
    diagnoses = panels.reports("diagnosis", [Job(id=row["id"], state=row["state"])
                                             for row in page
                                             if row["state"] == JobState.FAILED])
    # Every row's URL differs only in the job's id at its end: reversed once, not per row.
    base = reverse("api-job-detail", kwargs={"pk": 0}).removesuffix("0/")
    if request is not None:
        base = request.build_absolute_uri(base)
    out = []
    for row in page:
        written = dict(zip(FIELDS, _READ(row), strict=True))
        for field, write in _WRITTEN:
            written[field] = write(written[field])
        written["url"] = f"{base}{row['id']}/"
        written["diagnosis"] = diagnoses.get(row["id"])
        out.append(written)
    return out
