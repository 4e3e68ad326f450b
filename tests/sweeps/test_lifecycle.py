"""A sweep's life against a scripted backend: recorded with its estimate, submitted exactly
once, its trials and state reconciled from what Vertex says, cancelled."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.backends import errors
from controlplane.backends.base import RemoteTrial
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import Sweep, SweepState
from controlplane.teams.models import Team
from tests.fakes import FakeTuningBackend
from tests.sweeps.conftest import sweep_body
from vertexplan.pricing.money import cost_of_seconds


@pytest.fixture
def sweep(team: Team, member: Any, tuning_backend: FakeTuningBackend,
          django_capture_on_commit_callbacks: Any) -> Sweep:
    body = sweep_body()
    checked = lifecycle.check(body, team)
    assert checked.ok, checked.errors
    with django_capture_on_commit_callbacks(execute=False) as queued:
        made = lifecycle.record(team=team, user=member, request=body, checked=checked)
    assert len(queued) == 1  # the submission, after the commit
    return made


def trial(trial_id: str, state: str, lr: float, loss: float | None = None,
          minutes: int = 1) -> RemoteTrial:
    start = timezone.now() - timedelta(minutes=10)
    return RemoteTrial(
        id=trial_id, state=state, parameters={"lr": lr},
        final_metrics={"val_loss": loss} if loss is not None else {},
        final_step=4 if loss is not None else None,
        measurements=[{"step": 4, "metrics": {"val_loss": loss}}] if loss is not None else [],
        custom_job=f"projects/p/locations/us-central1/customJobs/{trial_id}00",
        start_time=start, end_time=start + timedelta(minutes=minutes),
        infeasible_reason="" if loss is not None else "The trial's job failed: exit 3")


def test_a_recorded_sweep_carries_its_estimate(sweep: Sweep) -> None:
    assert sweep.state == SweepState.QUEUED and sweep.metric_id == "val_loss"
    assert sweep.goal == "MINIMIZE"
    assert sweep.trial_hourly_micros > 0
    # Three trials of half an hour each at the trial's hourly rate.
    assert sweep.estimate_micros == 3 * cost_of_seconds(sweep.trial_hourly_micros, 1800)
    assert sweep.price_snapshot["lines"]


def test_submit_twice_creates_one_tuning_job(sweep: Sweep, tuning_backend) -> None:
    lifecycle.submit(sweep.pk)
    lifecycle.submit(sweep.pk)
    assert len(tuning_backend.tuning_created) == 1
    body = tuning_backend.tuning_created[0]
    assert body["displayName"] == f"cp-sweep-{sweep.pk}"
    assert body["labels"] == {"cp-sweep": str(sweep.pk), "cp-team": "vision"}
    # The trials write under the team's prefix, each in its own subfolder (Vertex's).
    assert body["trialJobSpec"]["baseOutputDirectory"]["outputUriPrefix"].endswith(
        f"/vision/sweep-{sweep.pk}")
    sweep.refresh_from_db()
    assert sweep.state == SweepState.PENDING and sweep.vertex_name in tuning_backend.tuning


def test_a_crash_after_create_is_found_not_created_again(sweep: Sweep, tuning_backend) -> None:
    tuning_backend.crash_after_create = True
    with pytest.raises(errors.TransientBackendError):
        lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.vertex_name == ""
    lifecycle.submit(sweep.pk)
    assert len(tuning_backend.tuning_created) == 1
    sweep.refresh_from_db()
    assert sweep.vertex_name in tuning_backend.tuning


def test_a_refused_spec_fails_the_sweep_with_the_reason(sweep: Sweep, tuning_backend) -> None:
    tuning_backend.fail_creates = [errors.InvalidJobSpec("study_spec.metrics is required")]
    lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.FAILED and "metrics is required" in sweep.error_message


def test_reconcile_follows_trials_marks_the_best_and_costs_them(sweep: Sweep,
                                                                tuning_backend) -> None:
    lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    name = sweep.vertex_name
    tuning_backend.set_tuning(name, state="JOB_STATE_RUNNING", start_time=timezone.now(),
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "ACTIVE", 5e-3)])
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.RUNNING
    assert [t.trial_id for t in sweep.trials.all()] == ["1", "2"]
    assert sweep.best_trial().trial_id == "1"
    tuning_backend.set_tuning(name, state="JOB_STATE_SUCCEEDED", end_time=timezone.now(),
                              trials=[trial("1", "SUCCEEDED", 1e-3, 2.5),
                                      trial("2", "SUCCEEDED", 5e-3, 2.1),
                                      trial("3", "INFEASIBLE", 9e-3)])
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.SUCCEEDED and sweep.ended_at is not None
    assert sweep.best_trial().trial_id == "2"  # the lowest val_loss
    third = sweep.trials.get(trial_id="3")
    assert third.state == "INFEASIBLE" and "exit 3" in third.infeasible_reason
    # Three trials of one minute each at the trial's hourly rate.
    assert sweep.cost_micros == round(sweep.trial_hourly_micros * 3 / 60)
    lifecycle.reconcile(sweep.pk)  # a finished sweep is left alone
    assert sweep.trials.count() == 3


def test_a_maximized_metric_marks_the_highest(sweep: Sweep) -> None:
    Sweep.objects.filter(pk=sweep.pk).update(goal="MAXIMIZE")
    sweep.refresh_from_db()
    for remote in (trial("1", "SUCCEEDED", 1e-3, 0.5), trial("2", "SUCCEEDED", 2e-3, 0.9)):
        sweep.trials.create(trial_id=remote.id, number=int(remote.id), state=remote.state,
                            parameters=remote.parameters, final_metrics=remote.final_metrics)
    assert sweep.best_trial().trial_id == "2"


def test_cancel_before_submission_ends_it_at_once(sweep: Sweep, tuning_backend) -> None:
    assert lifecycle.request_cancel(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.CANCELLED
    lifecycle.submit(sweep.pk)  # a late submit message creates nothing
    assert tuning_backend.tuning_created == []
    assert not lifecycle.request_cancel(sweep.pk)


def test_cancel_after_submission_asks_vertex_and_waits_for_it(
        sweep: Sweep, tuning_backend, django_capture_on_commit_callbacks: Any) -> None:
    lifecycle.submit(sweep.pk)
    sweep.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert lifecycle.request_cancel(sweep.pk)
    assert len(queued) == 1
    lifecycle.send_cancel(sweep.pk)  # what the queued cancel task runs
    assert tuning_backend.tuning_cancelled == [sweep.vertex_name]
    # Vertex still says RUNNING for a moment: the cancel stays asked for.
    tuning_backend.set_tuning(sweep.vertex_name, state="JOB_STATE_RUNNING")
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.CANCELLING
    tuning_backend.set_tuning(sweep.vertex_name, state="JOB_STATE_CANCELLED")
    lifecycle.reconcile(sweep.pk)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.CANCELLED


def test_a_terminal_state_is_final(sweep: Sweep) -> None:
    assert sweep.update_state(SweepState.FAILED, error="boom")
    assert not sweep.update_state(SweepState.RUNNING)
    sweep.refresh_from_db()
    assert sweep.state == SweepState.FAILED and sweep.error_message == "boom"


def test_the_trial_job_is_held_to_the_team_policy(team: Team) -> None:
    body = sweep_body(trial_job={**sweep_body()["trial_job"],
                                 "base_output_directory": "gs://someone-else/data"})
    checked = lifecycle.check(body, team)
    assert not checked.ok
    assert any("vision" in m for m in checked.errors["trial_job.base_output_directory"])


def test_trials_log_to_the_teams_wandb_project(sweep: Sweep, tuning_backend, team: Team
                                               ) -> None:
    from controlplane.core import secrets
    from controlplane.teams.models import TrackingSettings

    TrackingSettings.objects.create(team=team, wandb_entity="acme", wandb_project="sweeps",
                                    wandb_api_key=secrets.encrypt("k" * 40))
    lifecycle.submit(sweep.pk)
    pool = tuning_backend.tuning_created[0]["trialJobSpec"]["workerPoolSpecs"][0]
    env = {e["name"]: e["value"] for e in pool["containerSpec"]["env"]}
    assert env["WANDB_ENTITY"] == "acme" and env["WANDB_PROJECT"] == "sweeps"
    assert env["WANDB_API_KEY"] == "k" * 40  # sent, and only sent:
    sweep.refresh_from_db()
    assert "k" * 40 not in str(sweep.tuning_job) + str(sweep.request)
