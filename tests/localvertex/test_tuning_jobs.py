"""HyperparameterTuningJobs through Google's JobServiceClient: trials run as CustomJobs with
their parameters as --name=value arguments, at most parallel_trial_count at once; each trial's
metric read from the cloudml-hypertune file it writes, while it runs (intermediate
measurements) and when it ends; random and grid search; failed trials
counted against max_failed_trial_count; cancel; List without trials; Delete; and a tuning job
carrying on across an emulator restart."""

from __future__ import annotations

import json
import textwrap
from datetime import timedelta

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    EmulatorProcess,
    entries,
    json_entries,
    python_pool,
    wait_for,
)

# Left out of `make test-fast` (the inner loop): tuning jobs of many trials in the emulator.
pytestmark = pytest.mark.slow

State = aiplatform_v1.JobState
TrialState = aiplatform_v1.Trial.State
TERMINAL = (State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED, State.JOB_STATE_CANCELLED)

# A trial as Google's samples write one: its parameters from argv, "loss" = (x - 0.3)^2
# reported at two steps with cloudml-hypertune (installed in the replicas' Python, as in
# Vertex's prebuilt containers); fails when x is above FAIL_ABOVE.
TRIAL = textwrap.dedent(
    """
    import json, os, sys, time
    import hypertune
    args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    print(json.dumps({"message": "args", "argv": sys.argv[1:]}))
    time.sleep(float(os.environ.get("SLEEP", "0.6")))
    x = float(args.get("x", 0))
    if x > float(os.environ.get("FAIL_ABOVE", "1e9")):
        sys.exit(3)
    loss = (x - 0.3) ** 2
    reporter = hypertune.HyperTune()
    for step, value in ((1, loss + 1.0), (2, loss)):
        reporter.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="loss", metric_value=value, global_step=step)
        time.sleep(float(os.environ.get("BETWEEN_REPORTS", "0")) if step == 1 else 0)
    """
)


def tuning_job(name: str, parameters: list[dict], *, algorithm: str = "RANDOM_SEARCH",
               max_trials: int = 4, parallel: int = 2, max_failed: int = 0,
               env: dict[str, str] | None = None, goal: str = "MINIMIZE",
               selection: str = "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED"
               ) -> aiplatform_v1.HyperparameterTuningJob:
    return aiplatform_v1.HyperparameterTuningJob(
        display_name=name,
        study_spec={"metrics": [{"metric_id": "loss", "goal": goal}],
                    "parameters": parameters, "algorithm": algorithm,
                    "measurement_selection_type": selection},
        max_trial_count=max_trials, parallel_trial_count=parallel,
        max_failed_trial_count=max_failed,
        trial_job_spec={"worker_pool_specs": [python_pool(TRIAL, env=env)]},
    )


X = {"parameter_id": "x", "double_value_spec": {"min_value": 0.0, "max_value": 1.0}}


def run_to_end(emulator: EmulatorProcess, job, timeout: float = 120.0):
    created = emulator.jobs.create_hyperparameter_tuning_job(parent=PARENT,
                                                             hyperparameter_tuning_job=job)
    return finish(emulator, created.name, timeout)


def finish(emulator: EmulatorProcess, name: str, timeout: float = 120.0):
    found = []

    def ended() -> bool:
        found[:] = [emulator.jobs.get_hyperparameter_tuning_job(name=name)]
        return found[0].state in TERMINAL

    wait_for(ended, timeout, interval=0.3)
    return found[0]


def final(trial) -> float:
    return next(m.value for m in trial.final_measurement.metrics if m.metric_id == "loss")


def test_random_search_runs_every_trial_two_at_a_time(emulator: EmulatorProcess) -> None:
    batch = {"parameter_id": "batch", "integer_value_spec": {"min_value": 2, "max_value": 8},
             "scale_type": "UNIT_LOG_SCALE"}
    job = run_to_end(emulator, tuning_job("random", [X, batch], max_trials=5, parallel=2))
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error
    assert len(job.trials) == 5
    for trial in job.trials:
        assert trial.state == TrialState.SUCCEEDED, trial.infeasible_reason
        values = {p.parameter_id: p.value for p in trial.parameters}
        assert 0.0 <= values["x"] <= 1.0 and 2 <= values["batch"] <= 8
        assert float(values["batch"]).is_integer()
        # The metric is what the trial reported: its last report, at step 2.
        assert final(trial) == pytest.approx((values["x"] - 0.3) ** 2)
        assert trial.final_measurement.step_count == 2
        assert [m.step_count for m in trial.measurements] == [1, 2]
        # The trial ran as a CustomJob of its own, its parameters as --name=value arguments.
        child = emulator.jobs.get_custom_job(name=trial.custom_job)
        assert child.state == State.JOB_STATE_SUCCEEDED
        args = list(child.job_spec.worker_pool_specs[0].container_spec.args)
        assert f"--batch={int(values['batch'])}" in args
        assert any(a.startswith("--x=") and float(a[4:]) == pytest.approx(values["x"])
                   for a in args)
        child_id = child.name.rsplit("/", 1)[-1]
        printed = json_entries(entries(emulator.logs, f'resource.labels.job_id="{child_id}"'))
        assert [e["argv"] for e in printed if e.get("message") == "args"] == [args]
    # Never more than two trials at once.
    spans = [(t.start_time, t.end_time) for t in job.trials]
    for start, _ in spans:
        running = sum(1 for s, e in spans if s <= start < e)
        assert running <= 2
    assert len({t.parameters[0].value for t in job.trials}) == 5  # drawn, not repeated


def test_intermediate_measurements_show_while_the_trial_runs(emulator: EmulatorProcess) -> None:
    created = emulator.jobs.create_hyperparameter_tuning_job(
        parent=PARENT, hyperparameter_tuning_job=tuning_job(
            "intermediate", [X], max_trials=1, parallel=1,
            env={"SLEEP": "0", "BETWEEN_REPORTS": "30"}))

    def reported_once():
        # The tuning job lists its trial once the trial has started: none at first.
        trials = emulator.jobs.get_hyperparameter_tuning_job(name=created.name).trials
        return trials[0] if trials and trials[0].measurements else None

    trial = wait_for(reported_once, 60, interval=0.3)
    # The first report, read from the file while the trial is still running.
    assert trial.state == TrialState.ACTIVE
    (measurement,) = trial.measurements
    x = trial.parameters[0].value
    assert measurement.step_count == 1
    assert measurement.metrics[0].metric_id == "loss"
    assert measurement.metrics[0].value == pytest.approx((x - 0.3) ** 2 + 1.0)
    assert not trial.final_measurement.metrics
    emulator.jobs.cancel_hyperparameter_tuning_job(name=created.name)
    job = finish(emulator, created.name, 60)
    # Cancelled mid-trial, the trial keeps the measurement it reported, once.
    assert [m.step_count for m in job.trials[0].measurements] == [1]


def test_each_trial_writes_under_its_own_folder(emulator: EmulatorProcess) -> None:
    job = tuning_job("folders", [X], max_trials=2, parallel=2, env={"SLEEP": "0.1"})
    job.trial_job_spec.base_output_directory.output_uri_prefix = "gs://bucket/sweep/"
    job = run_to_end(emulator, job)
    for trial in job.trials:
        child = emulator.jobs.get_custom_job(name=trial.custom_job)
        assert child.job_spec.base_output_directory.output_uri_prefix == \
            f"gs://bucket/sweep/{trial.id}/"


def test_grid_search_walks_the_grid_and_stops_when_it_runs_out(
        emulator: EmulatorProcess) -> None:
    grid = [{"parameter_id": "x", "discrete_value_spec": {"values": [0.1, 0.3, 0.9]}},
            {"parameter_id": "mode", "categorical_value_spec": {"values": ["a", "b"]},
             "conditional_parameter_specs": [{
                 "parent_categorical_values": {"values": ["b"]},
                 "parameter_spec": {"parameter_id": "depth",
                                    "integer_value_spec": {"min_value": 1, "max_value": 2}}}]}]
    job = run_to_end(emulator, tuning_job("grid", grid, algorithm="GRID_SEARCH", max_trials=20,
                                          parallel=3, env={"SLEEP": "0.2"}))
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error
    points = [tuple(sorted((p.parameter_id, p.value) for p in t.parameters))
              for t in job.trials]
    # 3 values of x, each with mode a, or mode b at depth 1 and 2: 9 points, each once.
    assert len(points) == 9 and len(set(points)) == 9
    best = min(job.trials, key=final)
    assert {p.parameter_id: p.value for p in best.parameters}["x"] == pytest.approx(0.3)


def test_failed_trials_count_against_max_failed(emulator: EmulatorProcess) -> None:
    # Every trial with x above 0.05 fails: the job stops once two have.
    job = run_to_end(emulator, tuning_job("failing", [X], max_trials=8, parallel=1,
                                          max_failed=2, env={"FAIL_ABOVE": "0.05"}))
    assert job.state == State.JOB_STATE_FAILED
    failed = [t for t in job.trials if t.state == TrialState.INFEASIBLE]
    assert len(failed) == 2 and len(job.trials) < 8
    assert "exit" in failed[0].infeasible_reason.lower() or "fail" in failed[0].infeasible_reason
    assert "max_failed_trial_count 2" in job.error.message


def test_a_trial_that_reports_nothing_is_infeasible(emulator: EmulatorProcess) -> None:
    job = tuning_job("silent", [X], max_trials=1, parallel=1)
    job.study_spec.metrics[0].metric_id = "accuracy"  # the trial reports only "loss"
    job = run_to_end(emulator, job)
    assert job.state == State.JOB_STATE_FAILED
    assert job.trials[0].state == TrialState.INFEASIBLE
    assert "accuracy" in job.trials[0].infeasible_reason


def test_best_measurement_and_maximize(emulator: EmulatorProcess) -> None:
    job = run_to_end(emulator, tuning_job("best", [X], max_trials=1, parallel=1,
                                          goal="MAXIMIZE", selection="BEST_MEASUREMENT"))
    trial = job.trials[0]
    x = trial.parameters[0].value
    # The first report (loss + 1) is the larger, so it is the best when maximizing.
    assert final(trial) == pytest.approx((x - 0.3) ** 2 + 1.0)
    assert trial.final_measurement.step_count == 1


def test_cancel_stops_the_running_trials(emulator: EmulatorProcess) -> None:
    created = emulator.jobs.create_hyperparameter_tuning_job(
        parent=PARENT, hyperparameter_tuning_job=tuning_job(
            "cancelled", [X], max_trials=4, parallel=2, env={"SLEEP": "60"}))
    wait_for(lambda: len(emulator.jobs.get_hyperparameter_tuning_job(
        name=created.name).trials) == 2, 30)
    emulator.jobs.cancel_hyperparameter_tuning_job(name=created.name)
    job = finish(emulator, created.name, 60)
    assert job.state == State.JOB_STATE_CANCELLED and job.error.code == 1
    for trial in job.trials:
        assert emulator.jobs.get_custom_job(name=trial.custom_job).state == \
            State.JOB_STATE_CANCELLED
    with pytest.raises(exceptions.FailedPrecondition):
        emulator.jobs.cancel_hyperparameter_tuning_job(name=created.name)


def test_list_leaves_out_trials_and_delete_removes(emulator: EmulatorProcess) -> None:
    job = run_to_end(emulator, tuning_job("listed", [X], max_trials=1, parallel=1))
    listed = [j for j in emulator.jobs.list_hyperparameter_tuning_jobs(parent=PARENT)
              if j.name == job.name]
    assert len(listed) == 1 and not listed[0].trials and listed[0].display_name == "listed"
    emulator.jobs.delete_hyperparameter_tuning_job(name=job.name).result(timeout=10)
    with pytest.raises(exceptions.NotFound):
        emulator.jobs.get_hyperparameter_tuning_job(name=job.name)


@pytest.mark.parametrize(("change", "words"), [
    (lambda j: j.study_spec.ClearField("metrics"), "metrics"),
    (lambda j: setattr(j, "max_trial_count", 0), "max_trial_count"),
    (lambda j: setattr(j.study_spec, "algorithm", 2), "GRID_SEARCH"),
    (lambda j: j.trial_job_spec.ClearField("worker_pool_specs"), "worker_pool_specs"),
])
def test_a_bad_tuning_job_is_refused(emulator: EmulatorProcess, change, words) -> None:
    job = tuning_job("bad", [X])
    pb = aiplatform_v1.HyperparameterTuningJob.pb(job)
    change(pb)
    with pytest.raises(exceptions.InvalidArgument, match=words):
        emulator.jobs.create_hyperparameter_tuning_job(
            parent=PARENT, hyperparameter_tuning_job=aiplatform_v1.HyperparameterTuningJob(
                mapping=pb))


def test_default_algorithm_is_approximated_and_says_so(emulator: EmulatorProcess) -> None:
    job = run_to_end(emulator, tuning_job("bayes", [X], algorithm="ALGORITHM_UNSPECIFIED",
                                          max_trials=4, parallel=1, env={"SLEEP": "0.1"}))
    assert job.state == State.JOB_STATE_SUCCEEDED
    job_id = job.name.rsplit("/", 1)[-1]
    lines = entries(emulator.logs, f'resource.labels.job_id="{job_id}"')
    assert any("approximates" in e.text_payload for e in lines)


def test_a_tuning_job_carries_on_after_a_restart(start_emulator) -> None:
    emulator = start_emulator()
    created = emulator.jobs.create_hyperparameter_tuning_job(
        parent=PARENT, hyperparameter_tuning_job=tuning_job(
            "survivor", [X], max_trials=3, parallel=1, env={"SLEEP": "1.5"}))
    first = wait_for(lambda: [t for t in emulator.jobs.get_hyperparameter_tuning_job(
        name=created.name).trials if t.state == TrialState.SUCCEEDED], 60)[0]
    emulator.restart()
    job = finish(emulator, created.name, 120)
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error
    assert len(job.trials) == 3
    again = job.trials[0]
    assert again.id == first.id and final(again) == final(first)
    assert list(again.parameters) == list(first.parameters)
    assert json.dumps([t.id for t in job.trials]) == '["1", "2", "3"]'
    assert PROJECT in job.name and job.end_time - job.start_time > timedelta(seconds=1)
