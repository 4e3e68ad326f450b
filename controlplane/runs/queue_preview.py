"""Where a job composed now would land in the queue in front of Vertex, before it is
submitted: the compose page's and validate's `queue` section. The admission's own decision
(vertexplan.fairshare.decide) run on the queue as it is, with the new job added as if
submitted now; it reads only (no lock, no lease) and applies nothing."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

from controlplane.runs import admission, holders
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team
from vertexplan import fairshare
from vertexplan import quota as plan_quota

# The id the new job goes by in the decision: no job's id is text.
NEW = "new"


def landing(team: Team, custom_job: dict[str, Any], region: str,
            priority: str) -> dict[str, Any] | None:
    """What the next admission round would do with the job: `admitted` (it goes to Vertex),
    `waiting` (its place among the waiting jobs, why, and the soonest it could start by the
    running jobs' timeouts; `stops`: the borrowing jobs that would be stopped at a checkpoint
    for it), or `refused` (why). None with the queue off or for a job without accelerators."""
    if not admission.enabled():
        return None
    demand = holders.demand(plan_quota.needs(custom_job), region)
    if not demand:
        return None
    now = timezone.now()
    waiting_rows = list(Job.objects.filter(state=JobState.QUEUED_LOCAL)
                        .select_related("team").prefetch_related("attempts"))
    # A flavor whose project quota cannot be read counts as unlimited, as in the rounds.
    state, _ = admission.plan_state(now, waiting_rows)
    new = fairshare.Job(id=NEW, team=team.slug, demand=demand, priority=priority,
                        submitted_at=now.timestamp(), limit_s=admission.limit_of(custom_job))
    decisions = fairshare.decide(dataclasses.replace(state, waiting=[*state.waiting, new]))
    return _said(decisions, len(state.waiting) + 1)


def _said(decisions: fairshare.Decisions, waiting: int) -> dict[str, Any]:
    if NEW in decisions.admit:
        return {"where": "admitted", "note": "it would go to Vertex at the next admission round"}
    for refusal in decisions.refused:
        if refusal.job_id == NEW:
            return {"where": "refused", "note": refusal.reason}
    stops = sorted(int(p.job_id) for p in decisions.preempt if p.for_job_id == NEW)
    for entry in decisions.waiting:
        if entry.job_id == NEW:
            start = (datetime.fromtimestamp(entry.earliest_start, tz=UTC).isoformat()
                     if entry.earliest_start is not None else None)
            note = f"it would wait, place {entry.place} of {waiting}: {entry.reason}"
            if stops:
                note += (f"; job{'s' if len(stops) > 1 else ''} "
                         f"{', '.join(map(str, stops))} would be stopped at a checkpoint for it")
            return {"where": "waiting", "place": entry.place, "of": waiting,
                    "reason": entry.reason, "earliest_start": start, "stops": stops,
                    "note": note}
    # decide() places every waiting job it neither admits nor refuses.
    return {"where": "unknown", "note": "the admission did not place it"}
