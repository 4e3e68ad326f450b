"""`vcp jobs list --group-by` on the generated client, answered by the control plane's own
Django app in the test's process (the harness of test_job_notes_cli.py): a table of groups with
their jobs by state, losses, cost in dollars and GPU-hours; JSON as the API answers
(micro-dollars); a refused group_by exits 1 naming it."""

from __future__ import annotations

import json
from datetime import timedelta

from django.utils import timezone

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.client.test_job_notes_cli import Vcp, vcp  # noqa: F401  (the fixture)
from tests.people import make_user


def test_the_list_prints_its_groups_in_dollars(vcp: Vcp, team: Team) -> None:  # noqa: F811
    owner = make_user("ada", team, Role.ADMIN)
    ended = timezone.now()
    # a1 ran 8 GPUs for 90 minutes: 12 GPU-hours.
    eight = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"acceleratorCount": 8},
                                              "replicaCount": "1"}]}}
    for name, experiment, loss, micros, state, custom_job in (
            ("a1", "warmup", 1.5, 1_234_560_000, JobState.SUCCEEDED, eight),
            ("a2", "warmup", 2.5, 1_000_000, JobState.FAILED, {}),
            ("b1", "long-ctx", 1.0, 0, JobState.RUNNING, {})):
        Job.objects.create(team=team, created_by=owner, name=name, request={},
                           custom_job=custom_job, project="p", region="us-central1",
                           state=state, tags={"experiment": experiment}, last_loss=loss,
                           cost_micros=micros, started_at=ended - timedelta(minutes=90),
                           ended_at=ended)
    done = vcp("-o", "table", "jobs", "list", "--group-by", "tag:experiment")
    assert done.exit_code == 0, done.output
    head, warmup, long_ctx = done.stdout.splitlines()
    assert head.split()[:7] == ["GROUP", "JOBS", "STATES", "BEST_LOSS", "MEAN_LOSS", "COST",
                                "($)"]
    assert warmup.startswith("warmup") and "1 SUCCEEDED, 1 FAILED" in warmup
    assert "1.5000" in warmup and "2.0000" in warmup and "$1,235.56" in warmup
    assert "GPU_HOURS" in head and " 12.0 " in warmup
    assert "1234560000" not in done.stdout
    assert long_ctx.startswith("long-ctx") and "1 RUNNING" in long_ctx and "$0.00" in long_ctx
    # Filters first, and JSON as the API answers it.
    done = vcp("jobs", "list", "--group-by", "tag:experiment", "--state", "FAILED")
    assert done.exit_code == 0, done.output
    body = json.loads(done.stdout)
    assert [(g["value"], g["jobs"], g["cost_micros"]) for g in body["groups"]] == [
        ("warmup", 1, 1_000_000)]


def test_a_refused_group_by_exits_1_naming_it(vcp: Vcp, team: Team) -> None:  # noqa: F811
    done = vcp("jobs", "list", "--group-by", "owner")
    assert done.exit_code == 1
    assert "group_by: 'owner': write tag:KEY" in done.stderr
