"""A team's running sweeps when its month's spend crosses its budget follow the team's choice,
as its jobs do: "cancel" cancels each sweep once through its one cancel path (Vertex stops its
trials with it), recorded with the reason "budget"; "notify" tells each sweep once and lets it
run. Another team's sweeps are untouched."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from controlplane.costs import budgets
from controlplane.costs.models import TeamBudget
from controlplane.runs.models import JobState
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import CancelReason, Sweep, SweepState
from controlplane.teams.models import Team
from tests.fakes import FakeTuningBackend
from tests.sweeps.conftest import sweep_body
from tests.sweeps.test_lifecycle import trial

pytestmark = pytest.mark.django_db


def running_sweep(team: Team, user: Any, backend: FakeTuningBackend, capture: Any) -> Sweep:
    """A sweep on Vertex with one trial done and one running for ten minutes (billed)."""
    body = sweep_body()
    checked = lifecycle.check(body, team)
    assert checked.ok, checked.errors
    with capture(execute=False):
        sweep = lifecycle.record(team=team, user=user, request=body, checked=checked)
    lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    backend.set_tuning(sweep.vertex_name, state="JOB_STATE_RUNNING", start_time=timezone.now(),
                       trials=[trial("1", "SUCCEEDED", 1e-3, 2.5), trial("2", "ACTIVE", 5e-3)])
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.RUNNING and sweep.cost_micros > 0
    return sweep


def budget(team: Team, micros: int, on_exceed: str) -> None:
    TeamBudget.objects.update_or_create(team=team, defaults={
        "monthly_micros": micros, "on_exceed": on_exceed})


@pytest.fixture
def sweeps(team: Team, other_team: Team, member: Any, outsider: Any,
           tuning_backend: FakeTuningBackend,
           django_capture_on_commit_callbacks: Any) -> tuple[Sweep, Sweep]:
    ours = running_sweep(team, member, tuning_backend, django_capture_on_commit_callbacks)
    theirs = running_sweep(other_team, outsider, tuning_backend,
                           django_capture_on_commit_callbacks)
    # The other team has a budget that chose cancel too, and is far from it.
    budget(other_team, 100_000_000, "cancel")
    return ours, theirs


def test_cancel_cancels_a_running_sweep_once_with_the_reason_budget(
        sweeps: tuple[Sweep, Sweep], team: Team, tuning_backend: FakeTuningBackend,
        django_capture_on_commit_callbacks: Any) -> None:
    ours, theirs = sweeps
    budget(team, ours.cost_micros - 1, "cancel")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        [crossing] = budgets.check_crossings()
        assert budgets.check_crossings() == [], "acted on once"
    assert crossing.action == "cancel"
    assert len(queued) == 1, "one cancel call queued, for our sweep only"
    lifecycle.send_cancel(ours.pk)  # what the queued cancel task runs
    assert tuning_backend.tuning_cancelled == [ours.vertex_name]
    ours.refresh_from_db()
    assert ours.state == SweepState.CANCELLING and ours.cancel_reason == CancelReason.BUDGET
    [notice] = ours.budget_notices.all()
    assert notice.cancelled and "being cancelled" in notice.message
    # A second cancel (the user's) queues no second call, and the reason stays.
    with django_capture_on_commit_callbacks(execute=False) as again:
        assert lifecycle.request_cancel(ours.pk)
    assert again == []
    ours.refresh_from_db()
    assert ours.cancel_reason == CancelReason.BUDGET
    # Vertex stops the running trial with its tuning job: the trial's job ends cancelled.
    tuning_backend.set_tuning(ours.vertex_name, state="JOB_STATE_CANCELLED",
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "INFEASIBLE", 5e-3)])
    lifecycle.reconcile(ours.pk)
    ours.refresh_from_db()
    assert ours.state == SweepState.CANCELLED
    assert ours.trials.get(trial_id="2").job.state == JobState.CANCELLED
    assert ours.trials.get(trial_id="1").job.state == JobState.SUCCEEDED
    theirs.refresh_from_db()
    assert theirs.state == SweepState.RUNNING and theirs.cancel_reason == ""
    assert not theirs.budget_notices.exists()


def test_notify_tells_a_running_sweep_once_and_lets_it_run(
        sweeps: tuple[Sweep, Sweep], team: Team, tuning_backend: FakeTuningBackend,
        django_capture_on_commit_callbacks: Any) -> None:
    ours, theirs = sweeps
    budget(team, ours.cost_micros - 1, "notify")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        [crossing] = budgets.check_crossings()
        assert budgets.check_crossings() == []
    assert crossing.action == "notify" and queued == []
    assert tuning_backend.tuning_cancelled == []
    ours.refresh_from_db()
    assert ours.state == SweepState.RUNNING and ours.cancel_reason == ""
    [notice] = ours.budget_notices.all()
    assert not notice.cancelled and "go on" in notice.message
    assert notice.spent_micros == crossing.spent_micros
    # Crossing a new budget tells it again; the old crossing never does.
    budget(team, ours.cost_micros - 2, "notify")
    assert len(budgets.check_crossings()) == 1
    assert ours.budget_notices.count() == 2
    assert not theirs.budget_notices.exists()


def test_a_user_cancel_is_recorded_as_the_users(sweeps: tuple[Sweep, Sweep]) -> None:
    ours, _ = sweeps
    assert lifecycle.request_cancel(ours.pk)
    ours.refresh_from_db()
    assert ours.state == SweepState.CANCELLING and ours.cancel_reason == CancelReason.USER
