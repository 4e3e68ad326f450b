"""A periodic sweep whose room has nothing to do returns after one read (the task decorator's
`idle`), before its lease's two writes; with something to do it runs under its lease as before."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters import tasks as cluster_tasks
from controlplane.clusters.models import Cluster
from controlplane.core.models import Lease
from controlplane.logs import tasks as log_tasks
from controlplane.notifications import tasks as notification_tasks
from controlplane.runs import reconcile
from controlplane.runs import tasks as run_tasks
from controlplane.runs.models import Job
from controlplane.serving import tasks as serving_tasks
from controlplane.sweeps import tasks as sweep_tasks
from controlplane.sweeps.models import Sweep

pytestmark = pytest.mark.django_db

SWEEPS = [run_tasks.reconcile_jobs, log_tasks.follow_logs, cluster_tasks.reconcile_clusters,
          sweep_tasks.reconcile_sweeps, notification_tasks.deliver_pending,
          serving_tasks.reconcile_serving, serving_tasks.probe_endpoints]


@pytest.mark.parametrize("sweep", SWEEPS, ids=lambda t: t.name.rsplit(".", 1)[-1])
def test_an_idle_rooms_tick_reads_and_takes_no_lease(sweep: Any, backend: Any,
                                                    django_assert_max_num_queries: Any) -> None:
    with django_assert_max_num_queries(3):  # the serving room asks three tables
        sweep.apply().get()
    assert not Lease.objects.exists()


def test_an_unfinished_job_wakes_the_jobs_sweep_under_its_lease(
        make_job: Callable[..., Job], backend: Any) -> None:
    make_job()
    assert not reconcile.nothing_to_do()
    run_tasks.reconcile_jobs.apply().get()
    lease = Lease.objects.get(name="controlplane.runs.tasks.reconcile_jobs")
    assert lease.holder == ""  # taken, and given back when the sweep ended


def test_a_job_that_ended_lately_is_still_trailed(make_job: Callable[..., Job]) -> None:
    """Lines after a job's end may reveal a restart (reconcile.trail_ended): the sweep stays
    awake for RESTART_TRAILING after the last end, and sleeps after it."""
    job = make_job()
    Job.objects.filter(pk=job.pk).update(state="SUCCEEDED", ended_at=timezone.now())
    assert not reconcile.nothing_to_do()
    Job.objects.filter(pk=job.pk).update(
        ended_at=timezone.now() - reconcile.RESTART_TRAILING - timedelta(seconds=1))
    assert reconcile.nothing_to_do()


def test_a_running_cluster_or_an_active_sweep_wakes_its_room(make_job: Callable[..., Job]) -> None:
    job = make_job()
    assert cluster_tasks._no_cluster_alive() and sweep_tasks._no_sweep_active()
    cluster = Cluster.objects.create(
        team=job.team, created_by=job.created_by, name="ray-a", region="us-central1",
        request={}, resource={}, state=Cluster.State.RUNNING, hourly_micros=1)
    assert not cluster_tasks._no_cluster_alive()  # its idle time is flagged by the sweep
    Cluster.objects.filter(pk=cluster.pk).update(state=Cluster.State.DELETED)
    assert cluster_tasks._no_cluster_alive()
    Sweep.objects.create(
        team=job.team, created_by=job.created_by, name="lr", request={}, project="proj-1",
        tuning_job={}, region="us-central1", metric_id="loss", goal="MINIMIZE",
        state="RUNNING")
    assert not sweep_tasks._no_sweep_active()
