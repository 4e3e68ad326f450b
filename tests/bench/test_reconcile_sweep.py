"""bench.reconcile_sweep measures what it names: its jobs are a steady running fleet (every
one reached by a sweep and handed on by the page, none reconciled alone), priced, with the
step rows the health check reads; and a fleet that is not steady stops it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from bench import reconcile_sweep
from controlplane.logs.models import StepMetric
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team
from localvertex.server import Emulator
from tests.runs import test_reconcile_listing as listing

emulator, project = listing.emulator, listing.project


def test_a_steady_fleet_is_swept_by_the_page(emulator: Emulator, project: str,
                                             team: Team) -> None:
    user = get_user_model().objects.create(username="sweeper")
    template = reconcile_sweep.template_job(team, user)
    assert template.price_snapshot and template.custom_job
    ids = reconcile_sweep.running_jobs(emulator, project, template, 30, steps=4)
    assert StepMetric.objects.filter(job_id__in=ids).count() == 120
    template.delete()
    phases = reconcile_sweep.wrap_phases()
    try:
        from controlplane.runs import reconcile

        reconcile.sweep()  # the restart fingerprints
        seconds, reached, split = reconcile_sweep.timed_sweeps(2, phases)
    finally:
        phases.restore()
    assert reached == [30, 30] and len(seconds) == 2
    assert {"listing", "restarts", "health", "cost"} <= set(split)
    jobs = Job.objects.filter(pk__in=ids)
    assert set(jobs.values_list("state", flat=True)) == {JobState.RUNNING}
    # Priced by the sweep (two hours at the template's rate), and judged healthy.
    assert all(cost > 0 for cost in jobs.values_list("cost_micros", flat=True))
    assert set(jobs.values_list("health", flat=True)) == {"ok"}


def test_a_fleet_that_moved_is_not_what_it_measures(emulator: Emulator, project: str,
                                                    team: Team) -> None:
    user = get_user_model().objects.create(username="sweeper")
    template = reconcile_sweep.template_job(team, user)
    ids = reconcile_sweep.running_jobs(emulator, project, template, 3, steps=2)
    template.delete()
    Job.objects.filter(pk=ids[0]).update(state=JobState.PENDING)  # its CustomJob runs
    phases = reconcile_sweep.wrap_phases()
    try:
        with pytest.raises(RuntimeError, match="1 jobs were reconciled one by one"):
            # A job whose row says PENDING while its CustomJob runs is recorded together
            # with the page; one whose attempt is gone goes alone.
            Job.objects.filter(pk=ids[1]).update(attempt=2)
            reconcile_sweep.timed_sweeps(1, phases)
    finally:
        phases.restore()


def test_a_fleet_started_at_once_is_recorded_by_one_sweep_of_moves(
        emulator: Emulator, project: str, team: Team) -> None:
    user = get_user_model().objects.create(username="sweeper")
    template = reconcile_sweep.template_job(team, user)
    ids = reconcile_sweep.running_jobs(emulator, project, template, 20, steps=4, burst=True)
    template.delete()
    jobs = Job.objects.filter(pk__in=ids)
    assert set(jobs.values_list("state", flat=True)) == {JobState.QUEUED}
    assert not StepMetric.objects.filter(job_id__in=ids).exists()
    phases = reconcile_sweep.wrap_phases()
    try:
        _, reached, split = reconcile_sweep.timed_sweeps(1, phases)
    finally:
        phases.restore()
    # Every start recorded by the page's moves, none by the per-job code.
    assert reached == [20] and split["moves"] > 0
    assert set(jobs.values_list("state", flat=True)) == {JobState.RUNNING}
    assert all(job.started_at is not None for job in jobs)
