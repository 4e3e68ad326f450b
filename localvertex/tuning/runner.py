"""Running a HyperparameterTuningJob: its trials as CustomJobs, as Vertex runs them.

One TuningRunner thread per tuning job. Each trial is a CustomJob of the emulator's own (so it
has its replicas, restarts, log entries and `custom_job` name like any other), made from the
trial job spec with the trial's parameters added to every pool's arguments as
``--<parameter_id>=<value>`` and the variables cloudml-hypertune reads
(``CLOUD_ML_HP_METRIC_FILE``, ``CLOUD_ML_TRIAL_ID``; VERTEX_FACTS.md A1). The runner

* keeps up to parallel_trial_count trials running, max_trial_count in all (a grid may end
  sooner), with parameters from search.py;
* while a trial's CustomJob runs, reads the metric file the trial writes (one JSON object per
  line, the metric's tag as key, ``global_step``; metrics.py) into the trial's
  measurements whenever it changes, so intermediate measurements show during the trial as on
  Vertex; when the job ends, reads it once more and sets the final measurement (the last one,
  or the best with BEST_MEASUREMENT): SUCCEEDED; a trial whose job failed or that reported no
  value of the study's metric is INFEASIBLE, and counts as failed;
* fails the job once max_failed_trial_count trials have failed (0: no limit here, as Vertex's
  own choice is not documented; the job then fails only when no trial succeeds);
* on cancel, cancels the running trials' CustomJobs and ends CANCELLED.
All of it is in the stored job, so after an emulator restart a new runner carries on: the
trials' CustomJobs are resumed by the job manager, and their metric files are still there.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import struct_pb2

from localvertex.cloudlogging.entries import ERROR, INFO
from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.manager import JobManager
from localvertex.jobs.resources import to_cancelling
from localvertex.jobs.store import CustomJobPb, JobRecord, JobState
from localvertex.jobs.updates import CODE_CANCELLED, CODE_INTERNAL
from localvertex.tuning.metrics import (
    file_version,
    final_of,
    measurements_of,
    merged,
    metric_file,
    read_reports,
    replace_measurements,
)
from localvertex.tuning.search import APPROXIMATED_NOTE, Algorithm, flag_value, suggest
from localvertex.tuning.store import TuningRecord, TuningStore

log = logging.getLogger(__name__)

TrialState = aiplatform_v1.Trial.State
Goal = aiplatform_v1.StudySpec.MetricSpec.GoalType
SERVICE_LOG_ID = "localvertex"
METRIC_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"
TRIAL_ID_ENV = "CLOUD_ML_TRIAL_ID"
CANCELLED_REASON = "The tuning job was cancelled."
# google.rpc.Code of a tuning job its trials failed (the code Vertex's own answer carries is
# UNCONFIRMED; the message says what happened).
CODE_FAILED_PRECONDITION = 9
_TICK_S = 0.5
_CANCEL_WAIT_S = 60.0
LIVE = (TrialState.REQUESTED, TrialState.ACTIVE, TrialState.STOPPING)


def _value(value: Any) -> struct_pb2.Value:
    if isinstance(value, str):
        return struct_pb2.Value(string_value=value)
    return struct_pb2.Value(number_value=float(value))


def _plain(value: struct_pb2.Value) -> Any:
    if value.WhichOneof("kind") == "string_value":
        return value.string_value
    number = value.number_value
    return int(number) if number.is_integer() else number


class TuningRunner:
    """One tuning job's trials, run on its own thread."""

    def __init__(self, manager: JobManager, store: TuningStore, job_id: str,
                 finished: Callable[[str], None]) -> None:
        # The trials are the manager's CustomJobs; `finished` is told the job id when the
        # runner's thread ends.
        self.manager = manager
        self.store = store
        self._finished = finished
        self.job_id = job_id
        self.thread = threading.Thread(target=self.run, name=f"tuning-{job_id}", daemon=True)
        self._wake = threading.Event()
        self._stopping = False
        # trial id -> the version of its metric file last read (file_version).
        self._read: dict[str, tuple[int, int]] = {}

    def start(self) -> None:
        self.thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:
            log.exception("tuning job %s: emulator error", self.job_id)
            with contextlib.suppress(KeyError):
                self._finish(JobState.JOB_STATE_FAILED, CODE_INTERNAL, f"Emulator error: {exc}")
        finally:
            self._finished(self.job_id)

    def _run(self) -> None:
        record = self.store.get(self.job_id)
        if record is None or record.terminal:
            return
        if record.job.state in (JobState.JOB_STATE_QUEUED, JobState.JOB_STATE_PENDING):
            if record.job.study_spec.algorithm == Algorithm.ALGORITHM_UNSPECIFIED:
                self._line(APPROXIMATED_NOTE)
            self._set_running()
        while not self._stopping:
            record = self.store.get(self.job_id)
            if record is None or record.terminal:
                return
            if record.job.state == JobState.JOB_STATE_CANCELLING:
                self._cancel(record)
                return
            self._follow_trials(record)
            if self._decide(self.store.get(self.job_id)):
                return
            self._wake.wait(_TICK_S)
            self._wake.clear()

    def _decide(self, record: TuningRecord | None) -> bool:
        """Start trials or end the job; True once it has ended."""
        if record is None or record.terminal or record.job.state == JobState.JOB_STATE_CANCELLING:
            return record is None or record.terminal
        job = record.job
        trials = list(job.trials)
        failed = sum(1 for t in trials if t.state == TrialState.INFEASIBLE
                     and t.infeasible_reason != CANCELLED_REASON)
        if job.max_failed_trial_count and failed >= job.max_failed_trial_count:
            self._line(f"{failed} trials failed, max_failed_trial_count is "
                       f"{job.max_failed_trial_count}: the tuning job fails.", ERROR)
            self._stop_trials(record)
            self._finish(JobState.JOB_STATE_FAILED, CODE_FAILED_PRECONDITION,
                         f"{failed} trials failed (max_failed_trial_count "
                         f"{job.max_failed_trial_count}); the last: "
                         f"{self._last_failure(trials)}")
            return True
        live = sum(1 for t in trials if t.state in LIVE)
        exhausted = False
        while live < job.parallel_trial_count and len(trials) < job.max_trial_count:
            if not self._start_trial(record):
                exhausted = True
                break
            record = self.store.get(self.job_id)
            if record is None:
                return True
            trials = list(record.job.trials)
            live += 1
        if live == 0 and (exhausted or len(trials) >= job.max_trial_count):
            succeeded = sum(1 for t in trials if t.state == TrialState.SUCCEEDED)
            if succeeded:
                self._finish(JobState.JOB_STATE_SUCCEEDED, None, None)
            else:
                self._finish(JobState.JOB_STATE_FAILED, CODE_FAILED_PRECONDITION,
                             f"All {len(trials)} trials failed; the last: "
                             f"{self._last_failure(trials)}")
            return True
        return False

    @staticmethod
    def _last_failure(trials: list[Any]) -> str:
        reasons = [t.infeasible_reason for t in trials if t.state == TrialState.INFEASIBLE]
        return reasons[-1] if reasons else "none"

    # -- trials ----------------------------------------------------------------------------------

    def _best_parameters(self, record: TuningRecord) -> dict[str, Any] | None:
        metrics = record.job.study_spec.metrics
        if not metrics:
            return None
        primary = metrics[0]
        scored = []
        for trial in record.job.trials:
            if trial.state != TrialState.SUCCEEDED:
                continue
            values = [m.value for m in trial.final_measurement.metrics
                      if m.metric_id == primary.metric_id]
            if values:
                scored.append((values[0], trial))
        if not scored:
            return None
        pick = min if primary.goal == Goal.MINIMIZE else max
        best = pick(scored, key=lambda pair: pair[0])[1]
        return {p.parameter_id: _plain(p.value) for p in best.parameters}

    def _start_trial(self, record: TuningRecord) -> bool:
        """Create the next trial and its CustomJob; False when the study has no more points."""
        job = record.job
        number = len(job.trials) + 1
        parameters = suggest(job.study_spec, self.job_id, number,
                             self._best_parameters(record))
        if parameters is None:
            return False
        custom_job_id = self.manager.jobs.new_id()
        custom_job = self._trial_custom_job(record, number, custom_job_id, parameters)
        self.manager.jobs.insert(JobRecord(id=custom_job_id, project=record.project,
                                           location=record.location, job=custom_job))

        def add(r: TuningRecord) -> None:
            trial = r.job.trials.add()
            trial.id = str(number)
            trial.state = TrialState.ACTIVE
            trial.custom_job = custom_job.name
            trial.start_time.CopyFrom(to_timestamp(time.time_ns()))
            for name, value in parameters.items():
                parameter = trial.parameters.add()
                parameter.parameter_id = name
                parameter.value.CopyFrom(_value(value))
            r.job.update_time.CopyFrom(to_timestamp(time.time_ns()))

        self.store.update(self.job_id, add)
        self.manager.start(custom_job_id)
        shown = " ".join(f"{k}={flag_value(v)}" for k, v in parameters.items())
        self._line(f"Trial {number} started ({shown}) as CustomJob {custom_job_id}.")
        return True

    def _trial_custom_job(self, record: TuningRecord, number: int, custom_job_id: str,
                          parameters: dict[str, Any]) -> Any:
        job = CustomJobPb()
        job.display_name = f"{record.job.display_name[:100]}-trial-{number}"
        job.labels.update(dict(record.job.labels))
        job.job_spec.CopyFrom(record.job.trial_job_spec)
        # Each trial writes under its own folder, as Vertex sets the AIP_* directories of a
        # tuning job's trial: <base_output_directory>/<trial id>/model/, .../checkpoints/...
        # (CustomJobSpec.base_output_directory in custom_job.proto): a trial never resumes
        # from another's checkpoint.
        base = job.job_spec.base_output_directory.output_uri_prefix
        if base:
            job.job_spec.base_output_directory.output_uri_prefix = f"{base.rstrip('/')}/{number}/"
        args = [f"--{k}={flag_value(v)}" for k, v in parameters.items()]
        env = {METRIC_FILE_ENV: str(metric_file(self.manager.settings.data_dir, custom_job_id)),
               TRIAL_ID_ENV: str(number)}
        for pool in job.job_spec.worker_pool_specs:
            task = pool.WhichOneof("task")
            if task is None:
                continue
            spec = getattr(pool, task)
            spec.args.extend(args)
            for name, value in env.items():
                var = spec.env.add()
                var.name, var.value = name, value
        now = to_timestamp(time.time_ns())
        job.name = (f"projects/{record.project}/locations/{record.location}/customJobs/"
                    f"{custom_job_id}")
        job.state = JobState.JOB_STATE_QUEUED
        job.create_time.CopyFrom(now)
        job.update_time.CopyFrom(now)
        return job

    def _follow_trials(self, record: TuningRecord) -> None:
        for trial in record.job.trials:
            if trial.state not in LIVE:
                continue
            custom_job_id = trial.custom_job.rsplit("/", 1)[-1]
            child = self.manager.jobs.get(custom_job_id)
            if child is None:
                self._end_trial(trial.id, TrialState.INFEASIBLE, "The trial's CustomJob is gone.")
            elif child.terminal:
                self._trial_ended(record, trial, child)
            else:
                self._read_measurements(record, trial, custom_job_id)

    def _reported(self, record: TuningRecord, trial: Any, custom_job_id: str) -> list[Any]:
        """The trial's measurements: those it has, joined with what its file holds now."""
        path = metric_file(self.manager.settings.data_dir, custom_job_id)
        read = measurements_of(record.job.study_spec, read_reports(path))
        return merged(list(trial.measurements), read)

    def _read_measurements(self, record: TuningRecord, trial: Any, custom_job_id: str) -> None:
        """Intermediate measurements of a running trial, whenever its file has changed."""
        version = file_version(metric_file(self.manager.settings.data_dir, custom_job_id))
        if version is None or self._read.get(trial.id) == version:
            return
        self._read[trial.id] = version
        measurements = self._reported(record, trial, custom_job_id)
        if measurements == list(trial.measurements):
            return

        def change(r: TuningRecord) -> None:
            for live in r.job.trials:
                if live.id == trial.id and live.state in LIVE:
                    replace_measurements(live.measurements, measurements)
                    r.job.update_time.CopyFrom(to_timestamp(time.time_ns()))

        self.store.update(self.job_id, change)

    def _trial_ended(self, record: TuningRecord, trial: Any, child: JobRecord) -> None:
        if child.state == JobState.JOB_STATE_CANCELLED:
            self._end_trial(trial.id, TrialState.INFEASIBLE, CANCELLED_REASON)
            return
        if child.state != JobState.JOB_STATE_SUCCEEDED:
            reason = child.job.error.message or JobState(child.state).name
            self._end_trial(trial.id, TrialState.INFEASIBLE, f"The trial's job failed: {reason}")
            self._line(f"Trial {trial.id} failed: {reason}", ERROR)
            return
        measurements = self._reported(record, trial, child.id)
        final = final_of(record.job.study_spec, measurements)
        if final is None:
            metric = record.job.study_spec.metrics[0].metric_id
            self._end_trial(trial.id, TrialState.INFEASIBLE,
                            f"The trial reported no value of {metric} (cloudml-hypertune's "
                            f"file ${METRIC_FILE_ENV}).", measurements)
            self._line(f"Trial {trial.id} reported no {metric}.", ERROR)
            return
        self._end_trial(trial.id, TrialState.SUCCEEDED, "", measurements, final)
        shown = ", ".join(f"{m.metric_id}={m.value:.6g}" for m in final.metrics)
        self._line(f"Trial {trial.id} succeeded: {shown} at step {final.step_count}.")

    def _end_trial(self, trial_id: str, state: int, reason: str,
                   measurements: list[Any] | None = None, final: Any = None) -> None:
        def change(r: TuningRecord) -> None:
            for trial in r.job.trials:
                if trial.id == trial_id and trial.state in LIVE:
                    now = to_timestamp(time.time_ns())
                    trial.state = state
                    trial.end_time.CopyFrom(now)
                    if reason:
                        trial.infeasible_reason = reason
                    if measurements is not None:
                        replace_measurements(trial.measurements, measurements)
                    if final is not None:
                        trial.final_measurement.CopyFrom(final)
                    r.job.update_time.CopyFrom(now)

        self.store.update(self.job_id, change)

    def _stop_trials(self, record: TuningRecord) -> None:
        """Cancel every running trial's CustomJob and wait (bounded) for them to end."""
        live = [t for t in record.job.trials if t.state in LIVE]
        for trial in live:
            self._cancel_trial_job(trial.custom_job.rsplit("/", 1)[-1])
        deadline = time.monotonic() + _CANCEL_WAIT_S
        for trial in live:
            child_id = trial.custom_job.rsplit("/", 1)[-1]
            while time.monotonic() < deadline:
                child = self.manager.jobs.get(child_id)
                if child is None or child.terminal:
                    break
                time.sleep(0.2)
            self._end_trial(trial.id, TrialState.INFEASIBLE, CANCELLED_REASON)

    def _cancel_trial_job(self, custom_job_id: str) -> None:
        """Cancel a trial's CustomJob as CancelCustomJob does (one that has ended stays so)."""
        try:
            self.manager.jobs.update(custom_job_id, to_cancelling)
        except KeyError:
            return
        self.manager.cancel(custom_job_id)

    def _cancel(self, record: TuningRecord) -> None:
        self._stop_trials(record)
        self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")

    # -- the job's record and log --------------------------------------------------------------

    def _set_running(self) -> None:
        def change(r: TuningRecord) -> None:
            if r.terminal or r.job.state == JobState.JOB_STATE_CANCELLING:
                return
            now = to_timestamp(time.time_ns())
            r.job.state = JobState.JOB_STATE_RUNNING
            r.job.start_time.CopyFrom(now)
            r.job.update_time.CopyFrom(now)

        self.store.update(self.job_id, change)

    def _finish(self, state: int, code: int | None, message: str | None) -> None:
        def change(r: TuningRecord) -> None:
            if r.terminal:
                return
            now = to_timestamp(time.time_ns())
            r.job.state = state
            r.job.update_time.CopyFrom(now)
            r.job.end_time.CopyFrom(now)
            if code is not None:
                r.job.error.code = code
                r.job.error.message = message or ""

        record = self.store.update(self.job_id, change)
        self._line(f"Tuning job {JobState(record.job.state).name}.")

    def _line(self, text: str, severity: int = INFO) -> None:
        record = self.store.get(self.job_id)
        if record is not None:
            self.manager.log_line(record.project, self.job_id, None, text, severity,
                                  log_id=SERVICE_LOG_ID)
