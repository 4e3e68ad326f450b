"""CustomJobs and a HyperparameterTuningJob against the emulator, driven only through
`google.cloud.aiplatform` (tests/localvertex/sdk.py): a CustomJob of two pools on SPOT
(`submit(scheduling_strategy=SPOT)`) succeeds; one cancelled with `job.cancel()` ends
JOB_STATE_CANCELLED and the SDK raises; one whose replica exits 3 raises the SDK's error with
Vertex's replica message; `CustomJob.list(filter=...)` on a label and display_name returns
exactly the right jobs; a HyperparameterTuningJob whose trials report with `import hypertune`
succeeds with each trial's final measurement as the trial reported it, read through the SDK,
and is listed without its trials, as Vertex lists it.

The SDK polls a job every 5 s: the CustomJobs run side by side, and the test waits on the SDK's
own `job.state` until each has ended before asking the SDK's `wait_for_completion()` how it
ended (its first look then sees the end, so no 5 s sleep).
"""

from __future__ import annotations

import re
import textwrap
import uuid

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform_v1 import JobState, Scheduling, StudySpec, Trial

from tests.localvertex.helpers import (
    TERMINAL,
    EmulatorProcess,
    entries,
    json_entries,
    python_pool,
    wait_for,
)
from tests.localvertex.sdk import sdk_channel

# A trial as Google's samples write one: its parameter from argv, reported with cloudml-hypertune
# (installed in the replicas' Python, as in Vertex's prebuilt containers). Its second report is
# worse than its first: the SDK's default measurement selection ("best") keeps the first.
TRIAL = textwrap.dedent(
    """
    import sys
    import hypertune
    x = float(dict(a[2:].split("=", 1) for a in sys.argv[1:])["x"])
    reporter = hypertune.HyperTune()
    for step, loss in ((1, (x - 0.3) ** 2), (2, (x - 0.3) ** 2 + 1.0)):
        reporter.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="loss", metric_value=loss, global_step=step)
    """
)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess):
    with sdk_channel(monkeypatch, emulator):
        yield


def ended(job: aiplatform.CustomJob) -> JobState:
    """The job's state once it has ended, read through the SDK (`job.state` gets the job)."""
    return wait_for(lambda: job.state if job.state in TERMINAL else None, 60, interval=0.1)


def test_spot_cancel_failure_and_list_through_the_sdk(sdk, emulator: EmulatorProcess) -> None:
    # The emulator is shared by the session: this run's jobs carry a label of their own.
    run = f"run-{uuid.uuid4().hex[:8]}"
    labels = {"suite": run}
    spot = aiplatform.CustomJob(
        display_name="sdk-spot", labels=labels,
        worker_pool_specs=[python_pool(f"import json; print(json.dumps({{'pool': {i}}}))")
                           for i in (0, 1)])
    failing = aiplatform.CustomJob(display_name="sdk-failing", labels=labels,
                                   worker_pool_specs=[python_pool("import sys; sys.exit(3)")])
    sleeper = aiplatform.CustomJob(display_name="sdk-cancelled", labels=labels,
                                   worker_pool_specs=[python_pool("import time; time.sleep(120)")])
    spot.submit(scheduling_strategy=Scheduling.Strategy.SPOT)
    failing.submit(disable_retries=True)  # the replica's exit ends the job, no restart
    sleeper.submit()

    wait_for(lambda: sleeper.state == JobState.JOB_STATE_RUNNING, 60, interval=0.1)
    sleeper.cancel()
    assert ended(sleeper) == JobState.JOB_STATE_CANCELLED
    with pytest.raises(RuntimeError, match="Job failed with"):
        sleeper.wait_for_completion()
    assert sleeper.error.code == 1  # CANCELLED, as Vertex sets it

    assert ended(spot) == JobState.JOB_STATE_SUCCEEDED, spot.error
    spot.wait_for_completion()
    assert spot.job_spec.scheduling.strategy == Scheduling.Strategy.SPOT
    assert [p.replica_count for p in spot.job_spec.worker_pool_specs] == [1, 1]
    assert spot.start_time is not None and spot.end_time >= spot.start_time
    # The primary replica ran (what it printed, in the job's log). The job ends when it exits
    # 0, as on Vertex, so whether the worker got to print first is left open.
    printed = json_entries(entries(emulator.logs, f'resource.labels.job_id="{spot.name}" AND '
                                                  'resource.labels.task_name="workerpool0-0"'))
    assert [e["pool"] for e in printed if "pool" in e] == [0]

    assert ended(failing) == JobState.JOB_STATE_FAILED
    vertex_message = "The replica workerpool0-0 exited with a non-zero status of 3."
    with pytest.raises(RuntimeError, match=re.escape(vertex_message)):
        failing.wait_for_completion()
    assert failing.error.message.startswith(vertex_message)

    def names(filter_: str) -> set[str]:
        return {job.resource_name for job in aiplatform.CustomJob.list(filter=filter_)}

    every = {spot.resource_name, failing.resource_name, sleeper.resource_name}
    assert names(f'labels.suite="{run}"') == every
    assert names(f'labels.suite="{run}" AND display_name="sdk-spot"') == {spot.resource_name}
    assert names(f'labels.suite="{run}" AND state!="JOB_STATE_SUCCEEDED"') == \
        {failing.resource_name, sleeper.resource_name}
    listed = aiplatform.CustomJob.list(
        filter=f'display_name="sdk-failing" AND labels.suite="{run}"')
    assert [job.display_name for job in listed] == ["sdk-failing"]
    assert listed[0].error.message.startswith(vertex_message)


def test_hyperparameter_tuning_job_with_hypertune_trials_through_the_sdk(sdk) -> None:
    run = f"run-{uuid.uuid4().hex[:8]}"
    trial_job = aiplatform.CustomJob(display_name="sdk-trial",
                                     worker_pool_specs=[python_pool(TRIAL)])
    job = aiplatform.HyperparameterTuningJob(
        display_name="sdk-tuning", custom_job=trial_job,
        metric_spec={"loss": "minimize"},
        parameter_spec={"x": hpt.DoubleParameterSpec(min=0.0, max=1.0, scale="linear")},
        max_trial_count=2, parallel_trial_count=2, search_algorithm="random",
        labels={"suite": run})
    job.run()
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    spec = job.gca_resource.study_spec
    assert spec.measurement_selection_type == StudySpec.MeasurementSelectionType.BEST_MEASUREMENT

    assert len(job.trials) == 2
    for trial in job.trials:
        assert trial.state == Trial.State.SUCCEEDED, trial.infeasible_reason
        (x,) = [p.value for p in trial.parameters if p.parameter_id == "x"]
        assert 0.0 <= x <= 1.0
        # Both reports kept, and the best of them (the first) as the final measurement.
        assert [m.step_count for m in trial.measurements] == [1, 2]
        assert trial.final_measurement.step_count == 1
        (metric,) = trial.final_measurement.metrics
        assert metric.metric_id == "loss" and metric.value == pytest.approx((x - 0.3) ** 2)
        # The trial ran as a CustomJob of its own, with its parameter as an argument.
        child = aiplatform.CustomJob.get(trial.custom_job)
        assert child.state == JobState.JOB_STATE_SUCCEEDED
        args = list(child.job_spec.worker_pool_specs[0].container_spec.args)
        assert len(args) == 1 and float(args[0].removeprefix("--x=")) == pytest.approx(x)

    # Listed, without its trials as Vertex lists it; got again by name, with them.
    (listed,) = aiplatform.HyperparameterTuningJob.list(filter=f'labels.suite="{run}"')
    assert listed.resource_name == job.resource_name and listed.trials == []
    again = aiplatform.HyperparameterTuningJob.get(job.resource_name)
    assert [t.id for t in again.trials] == [t.id for t in job.trials]
