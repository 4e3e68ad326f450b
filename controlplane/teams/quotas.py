"""A team's quota for the admission in front of Vertex: what a site admin may write (checked
field by field, a bad value named with what is valid and nothing changed) and how the
admission reads it (vertexplan.fairshare's flavors and quotas)."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from contract import quota_metrics
from controlplane.backends import errors as backend_errors
from controlplane.backends import quotas as project_quotas
from controlplane.teams.models import QueuePriority, Team, TeamQuota
from vertexplan import fairshare
from vertexplan import quota as plan_quota

REGION = re.compile(r"^[a-z]+(-[a-z]+)+[0-9]+$")
MOST = 100_000  # accelerators or chips: far above any project's quota, far below overflow
FIELDS = ("accelerator", "region", "spot", "guarantee", "borrowing_limit")


def _count(value: Any, where: str, errors: dict[str, list[str]], *, null: bool) -> int | None:
    if value is None and null:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MOST:
        errors[where] = [f"a whole number from 0 to {MOST}" + (", or null for no limit"
                                                              if null else "")]
        return None
    return value


def _flavor(i: int, raw: Any, errors: dict[str, list[str]]) -> dict[str, Any] | None:
    where = f"flavors[{i}]"
    if not isinstance(raw, dict):
        errors[where] = [f"an object with {', '.join(FIELDS)}"]
        return None
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        errors[where] = [f"unknown field(s) {', '.join(unknown)}; valid: {', '.join(FIELDS)}"]
        return None
    accelerator = raw.get("accelerator")
    if accelerator not in quota_metrics.ACCELERATOR_METRICS:
        errors[f"{where}.accelerator"] = [
            "an accelerator type with a Vertex quota: "
            + ", ".join(sorted(quota_metrics.ACCELERATOR_METRICS))]
    region = raw.get("region")
    if not isinstance(region, str) or not REGION.match(region):
        errors[f"{where}.region"] = ["a Google Cloud region, e.g. us-central1"]
    spot = raw.get("spot", False)
    if not isinstance(spot, bool):
        errors[f"{where}.spot"] = ["true (spot and flex-start) or false (on-demand)"]
    guarantee = _count(raw.get("guarantee"), f"{where}.guarantee", errors, null=False)
    limit = _count(raw.get("borrowing_limit"), f"{where}.borrowing_limit", errors, null=True)
    return {"accelerator": accelerator, "region": region, "spot": spot,
            "guarantee": guarantee, "borrowing_limit": limit}


def parse(body: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(fields to save, errors by field) for a PUT of a team's quota."""
    errors: dict[str, list[str]] = {}
    if not isinstance(body, dict):
        return {}, {"non_field_errors": ["a JSON object with flavors, max_priority and "
                                         "preempt_without_checkpoint"]}
    raw = body.get("flavors", [])
    flavors = []
    if not isinstance(raw, list):
        errors["flavors"] = ["a list of {" + ", ".join(FIELDS) + "}"]
    else:
        seen: set[tuple] = set()
        for i, item in enumerate(raw):
            flavor = _flavor(i, item, errors)
            if flavor is None:
                continue
            key = (flavor["accelerator"], flavor["region"], flavor["spot"])
            if key in seen:
                errors[f"flavors[{i}]"] = [f"{key[0]} in {key[1]} "
                                           f"({'spot' if key[2] else 'on-demand'}) twice"]
            seen.add(key)
            flavors.append(flavor)
    priority = body.get("max_priority", QueuePriority.NORMAL)
    if priority not in QueuePriority.values:
        errors["max_priority"] = [f"one of {', '.join(QueuePriority.values)}"]
    lose = body.get("preempt_without_checkpoint", False)
    if not isinstance(lose, bool):
        errors["preempt_without_checkpoint"] = ["true or false"]
    return ({"flavors": flavors, "max_priority": priority,
             "preempt_without_checkpoint": lose}, errors)


def as_dict(team: Team, quota: TeamQuota | None) -> dict[str, Any]:
    return {"team": team.slug,
            "flavors": quota.flavors if quota else [],
            "max_priority": quota.max_priority if quota else QueuePriority.NORMAL,
            "preempt_without_checkpoint": bool(quota and quota.preempt_without_checkpoint),
            "updated_at": quota.updated_at.isoformat() if quota else None}


def flavor_of(accelerator: str, region: str, spot: bool) -> fairshare.Flavor:
    return fairshare.Flavor(accelerator, region, spot)


def plan_quotas(rows: list[TeamQuota]) -> dict[str, dict[fairshare.Flavor, fairshare.TeamQuota]]:
    """Every team's quota as the admission reads it: team slug -> flavor -> quota."""
    return {row.team.slug: {
        flavor_of(f["accelerator"], f["region"], f["spot"]):
            fairshare.TeamQuota(f["guarantee"], f["borrowing_limit"])
        for f in row.flavors} for row in rows}


def max_priority(team: Team) -> str:
    quota = TeamQuota.objects.filter(team=team).only("max_priority").first()
    return quota.max_priority if quota else QueuePriority.NORMAL


def priority_of(request: dict[str, Any], team: Team) -> str:
    """The priority a job asks for: `priority` as written, else normal, or the team's cap
    when that is lower."""
    given = request.get("priority")
    if given in QueuePriority.values:
        return given
    cap = max_priority(team)
    return min(QueuePriority.NORMAL, cap, key=fairshare.rank)


def priority_problem(given: Any, team: Team) -> str | None:
    """Why a job's `priority` is not one its team may ask for, or None."""
    if given is None:
        return None
    if given not in QueuePriority.values:
        return f"one of {', '.join(QueuePriority.values)}"
    cap = max_priority(team)
    if fairshare.rank(given) > fairshare.rank(cap):
        return (f"team {team.slug}'s jobs may ask for at most {cap} priority (set by the "
                f"site's admins); {given} is above it")
    return None


def too_big(custom_job: dict[str, Any], region: str) -> str | None:
    """Why a job can never start because it needs more accelerators at once than the project's
    whole Vertex quota (read from the Cloud Quotas API), or None. Only with the queue in front
    of Vertex on (CP_ADMISSION); an unreadable quota refuses nothing."""
    return _too_big(plan_quota.needs(custom_job), region)


def cluster_problem(team: Team, resource: dict[str, Any], region: str) -> str | None:
    """Why a cluster (a PersistentResource) could never be held with the queue in front of
    Vertex on: more accelerators of a kind than the project's whole Vertex quota, or than its
    team's guarantee where teams hold guarantees of that kind (a cluster is never stopped for
    another team, so it may not borrow, as a job without checkpoints may not). None with the
    queue off."""
    needs = plan_quota.resource_needs(resource)
    problem = _too_big(needs, region)
    if problem is None and getattr(settings, "CP_ADMISSION", False):
        demand = {fairshare.Flavor(need.accelerator, region, need.preemptible): need.count
                  for need in needs}
        state = fairshare.State(now=0.0, quotas=plan_quotas(list(
            TeamQuota.objects.select_related("team"))), project_quota={}, running=[],
            waiting=[])
        try:
            fairshare.check_fits_guarantee(fairshare.Job(
                id="cluster", team=team.slug, demand=demand, checkpointing=False), state)
        except fairshare.TooBig as exc:
            problem = str(exc).replace("a job without checkpoints", "a cluster").replace(
                "turn on checkpointing or ", "")
    return problem.replace("the job needs", "the cluster needs") if problem else None


def _too_big(needs: list[plan_quota.Need], region: str) -> str | None:
    if not getattr(settings, "CP_ADMISSION", False):
        return None
    for need in needs:
        try:
            found = project_quotas.limit(need.metric, region)
        except backend_errors.BackendError:
            return None
        if found is None or found.value is None or found.unlimited:
            continue
        try:
            fairshare.check_fits_project(
                {fairshare.Flavor(need.accelerator, region, need.preemptible): need.count},
                {fairshare.Flavor(need.accelerator, region, need.preemptible): found.value})
        except fairshare.TooBig as exc:
            return str(exc)
    return None
