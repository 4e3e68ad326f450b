"""Before submitting: does the project have the accelerators the job asks for, in its region?

For each accelerator type the job uses, its need next to the quota it draws on (SPOT and
FLEX_START draw on the preemptible quota, the rest on the on-demand one) and, apart, the
other kind's, so a job that does not fit one way shows whether it fits the other. The limits
come from the Cloud Quotas API (cached, controlplane/backends/quotas.py); what is in use is what
this control plane's own jobs hold in that region now (the API reports no usage).
"""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Subquery

from controlplane.backends import quotas
from controlplane.backends.errors import BackendError
from controlplane.compose import validation
from controlplane.runs import queue_preview
from controlplane.runs.models import Job, JobAttempt, JobKind, JobState
from controlplane.teams import quotas as team_quotas
from vertexplan import quota as plan

# States in which a job holds its accelerators (or is about to).
_HOLDING = (JobState.PENDING, JobState.RUNNING, JobState.CANCELLING)


def in_use(region: str) -> dict[str, int]:
    """Accelerators this control plane's jobs hold in `region`, by quota metric."""
    used: dict[str, int] = {}
    # A sweep's trials hold accelerators as any CustomJob; a Ray job runs on its cluster's
    # machines, which hold them already.
    # Each job's current attempt's spec as submitted (its CustomJob as composed until it has
    # one), read with the job in one query: a preflight asks this of every holding job.
    submitted = JobAttempt.objects.filter(job=OuterRef("pk"), number=OuterRef("attempt"))
    holding = (Job.objects.filter(region=region, state__in=_HOLDING).exclude(kind=JobKind.RAY)
               .annotate(submitted=Subquery(submitted.values("submitted_spec")[:1]))
               .values_list("submitted", "custom_job"))
    for submitted_spec, custom_job in holding:
        spec = submitted_spec or custom_job
        for need in plan.needs(spec):
            used[need.metric] = used.get(need.metric, 0) + need.count
    return used


def _side(metric: str, region: str, needed: int, used: dict[str, int]) -> dict[str, Any]:
    found = quotas.limit(metric, region)
    row: dict[str, Any] = {"metric": metric, "limit": None, "in_use": used.get(metric, 0),
                           "left": None, "fits": None, "unlimited": False}
    if found is None or found.value is None:
        return row
    if found.unlimited:
        return {**row, "unlimited": True, "fits": True, "quota_id": found.quota_id}
    left = max(found.value - row["in_use"], 0)
    return {**row, "limit": found.value, "left": left, "fits": needed <= left,
            "quota_id": found.quota_id}


def quota_of_checked(checked: validation.CheckedRequest) -> dict[str, Any] | None:
    """Validate's ``quota`` section; None for a job without accelerators."""
    if checked.composition is None:
        return None
    needs = plan.needs(checked.composition.custom_job)
    if not needs:
        return None
    region = checked.composition.request.region
    try:
        used = in_use(region)
        rows = []
        for need in needs:
            mine = _side(need.metric, region, need.count, used)
            other = _side(need.other_metric, region, need.count, used)
            rows.append({
                "accelerator": need.accelerator, "needed": need.count,
                "scheduling": "spot/flex-start" if need.preemptible else "on-demand",
                "quota": mine,
                "other_scheduling": "on-demand" if need.preemptible else "spot/flex-start",
                "other_quota": other,
            })
    except BackendError as exc:
        return {"region": region, "rows": [], "error": f"quotas could not be read: {exc}"}
    short = [r for r in rows if r["quota"]["fits"] is False]
    return {"region": region, "rows": rows, "fits": not short,
            "warning": "; ".join(
                f"needs {r['needed']} {r['accelerator']} ({r['scheduling']}) in {region}, "
                f"{r['quota']['left']} left of {r['quota']['limit']}: it will wait for quota"
                for r in short)}


def queue_of_checked(checked: validation.CheckedRequest) -> dict[str, Any] | None:
    """Validate's ``queue`` section: where the job would land in the queue in front of Vertex
    (controlplane/runs/queue_preview.py); None with the queue off, for a job without
    accelerators, or one checked for no team."""
    if checked.composition is None or checked.team is None or not checked.ok:
        return None
    request = checked.composition.request
    return queue_preview.landing(
        checked.team, checked.composition.custom_job, request.region,
        team_quotas.priority_of(request.to_dict(), checked.team))
