"""The API's job record (GET /api/v1/jobs/<id>/) written in one step per field.

Second only to the list among the API's reads (a CLI's `status -w`, dashboards polling a run),
and DRF's serializer spends about a third of the request building and walking its fields
(a ModelSerializer re-derives twenty of them from the model on every call).

`JobSerializer.Meta.fields` (and `AttemptSerializer.Meta.fields` for each attempt) is the one
list of the record's fields, for both: the schema (the OpenAPI document, the generated client)
and this record, which writes a column as DRF writes its type (list_rows.writer) and the rest
by WRITERS, with the same functions the serializer calls. A field that is neither stops the app
at start; tests/runs/test_list_rows.py holds both to the same output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from controlplane.runs import checkpoints, links, panels
from controlplane.runs.list_rows import writer
from controlplane.runs.models import Job, JobAttempt
from controlplane.runs.serializers import AttemptSerializer, JobSerializer

# (field, writer) of an attempt's columns, in the serializer's order.
_ATTEMPT = tuple((f, writer(JobAttempt, f)) for f in AttemptSerializer.Meta.fields)
# The fields that are not the job's column of their name: (job, absolute URL of a path) -> value.
WRITERS: dict[str, Callable[[Job, Callable[[str], str]], Any]] = {
    "url": lambda job, absolute: absolute(reverse("api-job-detail", kwargs={"pk": job.pk})),
    "team": lambda job, _: job.team.slug,
    "origin": lambda job, _: panels.origin(job),
    "diagnosis": lambda job, _: panels.report("diagnosis", job),
    "checkpoints": lambda job, _: checkpoints.listed(job),
    "links": lambda job, absolute: {link.key: absolute(link.url) for link in links.for_job(job)},
    "tracking": lambda job, _: {link.key: link.url for link in links.tracking_for(job)},
    "created_by": lambda job, _: job.created_by.username,
    "attempts": lambda job, _: [{f: getattr(a, f) if w is None else w(getattr(a, f))
                                 for f, w in _ATTEMPT} for a in job.attempts.all()],
    "cost": lambda job, _: panels.report("cost", job),
}
if stale := WRITERS.keys() - set(JobSerializer.Meta.fields):
    raise ImproperlyConfigured(f"detail_body writes {sorted(stale)}, which JobSerializer no "
                               "longer lists")
# (field, column writer or None) of the record's columns; None for a field WRITERS writes.
_COLUMNS = tuple((f, None if f in WRITERS else writer(Job, f)) for f in JobSerializer.Meta.fields)


def body(job: Job, request: Any) -> dict[str, Any]:
    """The record of a job read with its team, submitter and attempts (as JobDetail reads it),
    in JobSerializer's field order."""

    def absolute(url: str) -> str:
        return request.build_absolute_uri(url) if request is not None else url

    record: dict[str, Any] = {}
    for field, write in _COLUMNS:
        if field in WRITERS:
            record[field] = WRITERS[field](job, absolute)
        else:
            value = getattr(job, field)
            record[field] = value if write is None else write(value)
    return record
