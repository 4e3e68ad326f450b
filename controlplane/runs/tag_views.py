"""The job page's tags and note: the panel that shows them and the form that changes them
(the API's PATCH /api/v1/jobs/<id>/ changes them too; both check with tags.py)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from controlplane.runs import access as runs_access
from controlplane.runs import tags
from controlplane.runs.models import Job
from controlplane.security import audit
from controlplane.teams import access


def notes_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    return {"can_tag": access.can_submit(request.user, job.team),
            "tag_lines": tags.show_lines(job.tags), "max_tags": tags.MAX_TAGS,
            "max_note": tags.MAX_NOTE}


@login_required
@require_POST
def job_tags(request: HttpRequest, pk: int) -> HttpResponse:
    """Replace the job's tags and note with the form's; a refusal changes neither."""
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied("your role in this team cannot tag jobs")
    try:
        change = tags.update(job, tags=tags.parse_lines(request.POST.get("tags", "")),
                             note=request.POST.get("note", ""))
    except tags.TagError as exc:
        messages.error(request, f"Not saved: {exc.field}: {exc}")
    else:
        if change.changed:
            audit.record(request, "job.tag", job, detail=tags.change_detail(job, change))
            messages.success(request, f"Saved the {' and '.join(change.changed)} of {job.name}.")
    return redirect("job-detail", pk=job.pk)
