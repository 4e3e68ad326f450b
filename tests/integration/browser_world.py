"""The world the browser pages of tests/integration/test_browser_pages.py are walked in: short
jobs, and a sweep and a Ray cluster recorded through the services the API uses."""

from __future__ import annotations

import json
from typing import Any

from config.devstack import Stack


def short_job(name: str, team: str) -> dict[str, Any]:
    return {"name": name, "team": team, "chief": {"machine_type": "n1-standard-4"},
            "args": ["--preset", "tiny", "--steps", "30", "--checkpoint-every", "10"]}


# A sweep with trials and a Ray cluster with a finished Ray job, recorded through the services
# the API uses (the sweep composed, checked and priced; the cluster composed and priced) but
# never sent to the emulator: the pages need what they show, not a running study or Ray. The
# sweep stays RUNNING (no Vertex name, so the reconciler leaves it be and its Cancel shows);
# the cluster is RUNNING, which the reconciler only revisits when asked.
MAKE_SWEEP_AND_CLUSTER = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from controlplane.clusters import lifecycle as clusters
from controlplane.clusters.models import Cluster, RayJob
from controlplane.sweeps import lifecycle as sweeps
from controlplane.sweeps.models import SweepState, Trial
from controlplane.teams.models import Team

team, user = Team.objects.get(slug=TEAM), get_user_model().objects.get(username=USER)
now = timezone.now()
request = {"display_name": "pages-sweep", "algorithm": "RANDOM_SEARCH",
           "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
           "parameters": [{"parameter_id": "learning_rate", "type": "DOUBLE",
                           "min_value": 1e-4, "max_value": 3e-2,
                           "scale_type": "UNIT_LOG_SCALE"},
                          {"parameter_id": "warmup_steps", "type": "INTEGER",
                           "min_value": 0, "max_value": 3}],
           "max_trial_count": 4, "parallel_trial_count": 2, "max_failed_trial_count": 2,
           "trial_job": {"args": ["--preset", "tiny", "--steps", "4"],
                         "chief": {"machine_type": "n1-standard-4"}},
           "trial_hours": "0.1"}
checked = sweeps.check(request, team)
assert checked.ok, checked.errors
with transaction.atomic():
    sweep = sweeps.record(team=team, user=user, request=request, checked=checked)
    # Before the commit queues its submission: the submit task finds it past QUEUED.
    sweep.update_state(SweepState.RUNNING, started_at=now - timedelta(minutes=9))
for n, (lr, warmup, loss, state) in enumerate([(3e-3, 1, 2.41, "SUCCEEDED"),
                                                (2e-2, 3, 2.93, "SUCCEEDED"),
                                                (1e-4, 0, None, "INFEASIBLE"),
                                                (7e-4, 2, None, "ACTIVE")], start=1):
    Trial.objects.create(
        sweep=sweep, trial_id=str(n), number=n, state=state,
        parameters={"learning_rate": lr, "warmup_steps": warmup},
        final_metrics={"val_loss": loss} if loss else {}, final_step=4 if loss else None,
        measurements=[{"step": 4, "metrics": {"val_loss": loss}}] if loss else [],
        custom_job=f"projects/p/locations/us-central1/customJobs/{900 + n}",
        infeasible_reason="the trainer refused this learning rate" if loss is None
        and state == "INFEASIBLE" else "",
        started_at=now - timedelta(minutes=9 - n), ended_at=now if loss else None)

cluster = clusters.price_cluster({
    "name": "pages-ray", "ray": {"version": "2.47.1"},
    "pools": [{"id": "head", "machine_type": "n1-standard-4"},
              {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2,
               "min_replica_count": 1, "max_replica_count": 4}]})
cluster.team, cluster.created_by = team, user
cluster.save()
cluster.transition(Cluster.State.RUNNING, dashboard_uri="http://127.0.0.1:8265")
RayJob.objects.create(
    team=team, cluster=cluster, created_by=user, state=RayJob.State.SUCCEEDED,
    entrypoint=["python", "-m", "trainers.ray_train", "--preset", "tiny", "--steps", "20"],
    logs="\\n".join(f"step {s} loss {3 - s / 10:.3f} " + "x" * 150 for s in range(20)),
    summary={"ranks": [0, 1], "loss": [[s, 3 - s / 10] for s in range(1, 21)],
             "finished": {"step": 20}, "checkpoints": [{"path": "/tmp/ray/step-20"}]},
    started_at=now - timedelta(minutes=3), ended_at=now - timedelta(minutes=1))
print(json.dumps({"sweep": sweep.pk, "cluster": cluster.pk}))
"""


def make_sweep_and_cluster(stack: Stack, seeded: dict[str, Any]) -> dict[str, int]:
    script = (f"TEAM = {seeded['team']!r}\nUSER = {seeded['username']!r}\n"
              + MAKE_SWEEP_AND_CLUSTER)
    out = stack.manage("shell", "--no-imports", "-c", script, capture=True)
    return json.loads(out.strip().splitlines()[-1])
