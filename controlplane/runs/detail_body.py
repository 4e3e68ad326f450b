"""The API's job record (GET /api/v1/jobs/<id>/) written in one step per field.

Second only to the list among the API's reads (a CLI's `status -w`, dashboards polling a run),
and DRF's serializer spends about a third of the request building and walking its fields
(a ModelSerializer re-derives twenty of them from the model on every call). The figures that
need the other apps (cost, diagnosis, origin) and the links come from the same functions the
serializer calls. `JobSerializer` remains the record's schema (the OpenAPI document, the
generated client), and tests/runs/test_list_rows.py holds both to the same output.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from controlplane.runs import checkpoints, links, panels
from controlplane.runs.list_rows import moment
from controlplane.runs.models import Job, JobAttempt


def _attempt(attempt: JobAttempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "display_name": attempt.display_name,
        "vertex_name": attempt.vertex_name,
        "vertex_state": attempt.vertex_state,
        "submitted_at": moment(attempt.submitted_at),
        "started_at": moment(attempt.started_at),
        "ended_at": moment(attempt.ended_at),
        "error_message": attempt.error_message,
    }


def body(job: Job, request: Any) -> dict[str, Any]:
    """The record of a job read with its team, submitter and attempts (as JobDetail reads it),
    in JobSerializer's field order."""

    def absolute(url: str) -> str:
        return request.build_absolute_uri(url) if request is not None else url

    return {
        "id": job.pk,
        "url": absolute(reverse("api-job-detail", kwargs={"pk": job.pk})),
        "team": job.team.slug,
        "name": job.name,
        "kind": job.kind,
        "origin": panels.origin(job),
        "state": job.state,
        "state_changed_at": moment(job.state_changed_at),
        "error_message": job.error_message,
        "diagnosis": panels.report("diagnosis", job),
        "quota_wait": job.quota_wait,
        "checkpoints": [{"step": c.step, "path": c.path, "attempt": c.attempt,
                         "saved_at": c.saved_at.isoformat()} for c in checkpoints.existing(job)],
        "links": {link.key: absolute(link.url) for link in links.for_job(job)},
        "tracking": {link.key: link.url for link in links.tracking_for(job)},
        "attempt": job.attempt,
        "restarts": job.restarts,
        "created_by": job.created_by.username,
        "created_at": moment(job.created_at),
        "started_at": moment(job.started_at),
        "ended_at": moment(job.ended_at),
        "last_step": job.last_step,
        "total_steps": job.total_steps,
        "last_loss": None if job.last_loss is None else float(job.last_loss),
        "region": job.region,
        "request": job.request,
        "custom_job": job.custom_job,
        "attempts": [_attempt(a) for a in job.attempts.all()],
        "cost": panels.report("cost", job),
    }
