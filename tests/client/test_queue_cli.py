"""`vcp queue` on the generated client, answered by the control plane in the test's process:
a team's waiting jobs in place order with why, then its running ones (borrowing beyond the
guarantee marked); another team's jobs are not shown."""

from __future__ import annotations

import json
from typing import Any

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team, TeamQuota
from tests.client.test_job_notes_cli import Vcp, vcp  # noqa: F401 (a fixture)
from tests.people import make_user
from tests.runs.test_admission import job


def test_vcp_queue_lists_waiting_jobs_in_place_order_with_why(
        team: Team, other_team: Team, vcp: Vcp) -> None:  # noqa: F811 (the fixture)
    TeamQuota.objects.create(team=team, flavors=[
        {"accelerator": "NVIDIA_TESLA_A100", "region": "us-central1", "spot": False,
         "guarantee": 8, "borrowing_limit": 8}])
    owner = make_user("ada", team, Role.ADMIN)
    running = job(team, owner, 16, state=JobState.RUNNING)
    second, first = job(team, owner, 8), job(team, owner, 8)
    for made, place in ((first, 1), (second, 2)):
        Job.objects.filter(pk=made.pk).update(queue={"place": place, "reason": f"why {place}"})
    job(other_team, make_user("sol", other_team, Role.ADMIN), 8)

    result = vcp("queue")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    assert [(r["id"], r["place"], r["reason"], r["borrowing"]) for r in rows] == [
        (first.pk, 1, "why 1", False), (second.pk, 2, "why 2", False),
        (running.pk, None, "", True)]
    assert rows[0]["accelerators"] == "8 NVIDIA_TESLA_A100 in us-central1 (on-demand)"
    assert json.loads(vcp("queue", "--team", "speech").output) == []
