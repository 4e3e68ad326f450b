"""A hung trainer on the real stack (issue 37): the emulator runs the PyTorch trainer, whose
only rank blocks silently at step 25 (--debug-hang-at-step, as in a collective whose peer
died); the control plane flags it suspected_hang within its team's rule, cancels it and, as
the team's policy says restart_on_hang, runs it again from its newest committed checkpoint
(step 20) to the end."""

from __future__ import annotations

import re

import pytest

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
# The team's rule for this test, set in its database: a floor of 8 s is below the API's 60 s
# minimum, to keep the test short (its steps take milliseconds, so k x p95 is below it).
RULE = "hang_k=10, hang_floor_s=8, restart_on_hang=True"
DEFAULT_RULE = "hang_k=10, hang_floor_s=300, restart_on_hang=False"


def set_rule(stack: Stack, rule: str) -> None:
    stack.manage("shell", "-c", "from controlplane.teams.models import Team, TeamPolicy; "
                 "team = Team.objects.get(slug='vision'); "
                 "TeamPolicy.objects.get_or_create(team=team); "
                 f"TeamPolicy.objects.filter(team=team).update({rule})")


def test_a_hung_job_is_flagged_and_runs_again_from_its_checkpoint(stack: Stack,
                                                                   api: Api) -> None:
    set_rule(stack, RULE)
    try:
        response = api.post("/api/v1/jobs/", {
            "name": "hang-restart", "strategy": "ddp",
            "args": ["--preset", "tiny", "--steps", "40", "--checkpoint-every", "10",
                     "--eval-every", "0", "--debug-hang-at-step", "25"],
            "chief": {"machine_type": "n1-standard-4"}})
        assert response.status_code == 201, response.text
        job_id = response.json()["id"]
        job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=120,
                           what="the hung job to be restarted and finish", stack=stack)
        assert job["state"] == "SUCCEEDED", job["error_message"]
    finally:
        set_rule(stack, DEFAULT_RULE)
    events = api.events_through(job_id)
    hang = [e for e in events if e["kind"] == "suspected_hang"]
    assert len(hang) >= 1 and hang[0]["attempt"] == 1
    assert hang[0]["data"]["restart"] == "restarting" and hang[0]["data"]["threshold_s"] == 8
    # The trainer prints a step's event once the next is on its way: step 23's is its last.
    assert re.match(r"step 2[0-4]/40", hang[0]["data"]["last_lines"]["workerpool0-0"])
    resumed = [e for e in events if e["kind"] == "resumed" and e["attempt"] == 2]
    assert resumed and resumed[0]["step"] == 20
    restarts = api.get(f"/api/v1/jobs/{job_id}/restarts/")["results"]
    assert [r["cause"] for r in restarts][:1] == ["hang"]
    assert job["attempt"] == 2 and job["health"] == "ok"
