"""The team's policy applied to a cluster: the service account its nodes run as, the network
they join and the reservations their pools consume, checked exactly as a job's are
(controlplane/teams/job_policy.py).

Checked on the PersistentResource the request composes to (what Vertex would create), so the
form, the API and every later way of making a cluster are held to the same rules; the errors
are keyed by the request's fields (`service_account`, `network`, `pools[1].reservation`).
"""

from __future__ import annotations

from typing import Any

from controlplane.teams import job_policy
from controlplane.teams import policy as team_policy
from controlplane.teams.models import Team


def violations(resource: dict[str, Any], team: Team) -> dict[str, list[str]]:
    """{request field: [why]} for everything the cluster uses that its team may not."""
    rules = team_policy.effective(team)
    errors: dict[str, list[str]] = {}
    runtime = resource.get("resourceRuntimeSpec") or {}
    account = (runtime.get("serviceAccountSpec") or {}).get("serviceAccount")
    problem = job_policy.account_problem(account, team, rules)
    if problem:
        errors["service_account"] = [problem]
    problem = job_policy.network_problem(resource.get("network"), team, rules)
    if problem:
        errors["network"] = [problem]
    for index, pool in enumerate(resource.get("resourcePools") or []):
        affinity = ((pool or {}).get("machineSpec") or {}).get("reservationAffinity") or {}
        problem = job_policy.reservation_problem(affinity, team, rules)
        if problem:
            errors[f"pools[{index}].reservation"] = [problem]
    return errors
