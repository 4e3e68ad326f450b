"""The team's policy applied to a composed job: field errors, keyed like every other error.

Checked on the CustomJob the request composes to (what Vertex would run), so the form, the
API in both of its shapes, templates, clones, resubmissions and sweeps' trial jobs are held to
the same rules. (Here, beside the policy, so that every app that composes jobs reaches it.)
"""

from __future__ import annotations

from typing import Any

from controlplane.teams import policy as team_policy
from controlplane.teams import quotas as team_quotas
from controlplane.teams.models import Team

# workerPoolSpecs index -> the request's pool (index 2 is either, by what the request has).
_POOL_ROLES = {0: "chief", 1: "workers", 3: "evaluators"}


def _role(index: int, request: dict[str, Any]) -> str:
    if index == 2:
        return "reduction_server" if request.get("reduction_server") else "parameter_servers"
    return _POOL_ROLES.get(index, f"workerPoolSpecs[{index}]")


def violations(custom_job: dict[str, Any], request: dict[str, Any], team: Team
               ) -> dict[str, list[str]]:
    """{request field: [why]} for everything the job uses that its team may not."""
    rules = team_policy.effective(team)
    spec = custom_job.get("jobSpec") or {}
    errors: dict[str, list[str]] = {}
    where = rules.output_prefix + "/"

    out = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
    if out not in (None, "") and not team_policy.inside(out, rules.output_prefix):
        errors["base_output_directory"] = [
            f"team {team.slug}'s jobs write under {where} only (no '.' or '..' segments); "
            f"leave it empty for the job's own folder there"]

    account = account_problem(spec.get("serviceAccount"), team, rules)
    if account:
        errors["service_account"] = [account]
    network = network_problem(spec.get("network"), team, rules)
    if network:
        errors["network"] = [network]

    for name, field in (("enableWebAccess", "enable_web_access"),
                        ("enableDashboardAccess", "enable_dashboard_access")):
        if spec.get(name) and not rules.allow_web_access:
            errors[field] = [f"team {team.slug}'s policy does not allow web access to its "
                             "replicas (a team admin can allow it)"]

    priority = team_quotas.priority_problem(request.get("priority"), team)
    if priority:
        errors["priority"] = [priority]
    big = team_quotas.too_big(custom_job, str(request.get("region") or ""))
    if big:
        errors["accelerators"] = [big]

    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        affinity = ((pool or {}).get("machineSpec") or {}).get("reservationAffinity") or {}
        problem = reservation_problem(affinity, team, rules)
        if problem:
            errors[f"{_role(index, request)}.reservation"] = [problem]
    return errors


# The checks one at a time, for every resource that names these (jobs here; clusters'
# persistent resources in controlplane/clusters/policy.py).

def account_problem(account: Any, team: Team, rules: team_policy.Effective) -> str | None:
    """Why ACCOUNT (empty: Vertex's default) is not the team's to run as, or None."""
    if account in (None, "") or account in rules.service_accounts:
        return None
    allowed = ", ".join(sorted(rules.service_accounts)) or "none (team admins add them)"
    return f"not a service account of team {team.slug}; allowed: {allowed}"


def network_problem(network: Any, team: Team, rules: team_policy.Effective) -> str | None:
    """Why NETWORK (empty: Google's) is not the team's to use, or None."""
    if network in (None, "") or network in rules.networks:
        return None
    allowed = ", ".join(sorted(rules.networks)) or "none (team admins add them)"
    return f"not a network team {team.slug} may use; allowed: {allowed}"


def reservation_problem(affinity: dict[str, Any], team: Team, rules: team_policy.Effective
                        ) -> str | None:
    """Why a machine spec's reservationAffinity could consume what is not the team's, or None."""
    kind = affinity.get("reservationAffinityType")
    if kind in (None, "", "NO_RESERVATION", "RESERVATION_NONE"):
        return None
    allowed = ", ".join(sorted(rules.reservations)) or "none (team admins add them)"
    if kind == team_policy.ANY_RESERVATION and kind in rules.reservations:
        return None
    if kind != "SPECIFIC_RESERVATION":
        return (f"{kind} could consume another team's reservation: name one of "
                f"team {team.slug}'s with SPECIFIC_RESERVATION; allowed: {allowed}")
    named = [v for v in affinity.get("values") or [] if v not in rules.reservations]
    if named or not affinity.get("values"):
        return (f"not a reservation of team {team.slug}: "
                f"{', '.join(map(str, named)) or '(none named)'}; allowed: {allowed}")
    return None
