"""The API job list's rows, read as plain columns and written as JSON-ready dicts.

The list is the API's most asked read, and DRF's serializer costs about 0.2 ms a row there:
each of a row's twenty fields is looked up, typed and converted on its own, from a model
instance (three with select_related's team and user) built only to be read once. Here one
query gives the columns the row shows and each row is a dict built in one step.
`JobListSerializer` remains the schema of these rows (the OpenAPI document, the generated
client), and tests/runs/test_list_rows.py holds both to the same output for every field.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from controlplane.runs import panels
from controlplane.runs.models import Job, JobState

# The columns a row shows, as values() names them (the team's slug and the submitter's
# username through their joins).
COLUMNS = ("id", "team__slug", "name", "kind", "state", "quota_wait", "attempt", "restarts",
           "created_by__username", "created_at", "started_at", "ended_at", "last_step",
           "total_steps", "last_loss", "cost_micros", "lost_micros", "estimate_micros")


def moment(value: datetime | None) -> str | None:
    """A date-time as DRF's DateTimeField writes it: ISO 8601 in the current time zone, with
    UTC written as Z."""
    if value is None:
        return None
    text = value.astimezone(timezone.get_current_timezone()).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def rows(page: Sequence[dict[str, Any]], request: Any) -> list[dict[str, Any]]:
    """The list's rows for a page of COLUMNS values, in the serializer's field order."""
    diagnoses = panels.reports("diagnosis", [Job(id=row["id"], state=row["state"])
                                             for row in page
                                             if row["state"] == JobState.FAILED])
    # Every row's URL differs only in the job's id at its end: reversed once, not per row.
    base = reverse("api-job-detail", kwargs={"pk": 0}).removesuffix("0/")
    if request is not None:
        base = request.build_absolute_uri(base)
    return [{
        "id": row["id"],
        "url": f"{base}{row['id']}/",
        "team": row["team__slug"],
        "name": row["name"],
        "kind": row["kind"],
        "state": row["state"],
        "diagnosis": diagnoses.get(row["id"]),
        "quota_wait": row["quota_wait"],
        "attempt": row["attempt"],
        "restarts": row["restarts"],
        "created_by": row["created_by__username"],
        "created_at": moment(row["created_at"]),
        "started_at": moment(row["started_at"]),
        "ended_at": moment(row["ended_at"]),
        "last_step": row["last_step"],
        "total_steps": row["total_steps"],
        "last_loss": _number(row["last_loss"]),
        "cost_micros": row["cost_micros"],
        "lost_micros": row["lost_micros"],
        "estimate_micros": row["estimate_micros"],
    } for row in page]
