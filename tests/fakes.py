"""An in-memory Backend for unit tests of the lifecycle's own logic.

The integration tests (tests/integration/) exercise the real client libraries against the real
emulator; this double only lets unit tests script backend answers and crashes precisely. Where
it answers on its own (a create, a cancel, a refusal), it answers as Vertex and the emulator
do: tests/backends/test_contract.py runs the same tests against it and the emulator.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from google.cloud import aiplatform_v1

from contract.labels import label_problem
from controlplane.backends import errors
from controlplane.backends.base import (
    TERMINAL_VERTEX_STATES,
    Backend,
    JobPage,
    LogPage,
    RemoteJob,
    RemoteTuningJob,
    ReplicaMetrics,
)
from localvertex.core.filters import FilterError
from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.filter import compile_job_filter


def _check_labels(labels: dict[str, str]) -> None:
    """Vertex's label rules, as the contract writes them (and the emulator enforces them)."""
    for key, value in labels.items():
        if label_problem(key, key=True) or label_problem(value, key=False):
            raise errors.InvalidJobSpec(f"invalid label {key}={value!r}")


def _check_custom_job(custom_job: dict[str, Any], where: str = "custom_job") -> None:
    """The refusals of Vertex (and the emulator) that tests rely on: INVALID_ARGUMENT."""
    if not custom_job.get("displayName"):
        raise errors.InvalidJobSpec(f"{where}.display_name is required")
    _check_labels(custom_job.get("labels", {}))
    _check_job_spec(custom_job.get("jobSpec", {}), f"{where}.job_spec")


def _check_job_spec(spec: dict[str, Any], where: str) -> None:
    if not spec.get("workerPoolSpecs"):
        raise errors.InvalidJobSpec(f"{where}.worker_pool_specs is required")


def _cancelling(state: str, name: str) -> str:
    """The state a cancel leaves a job in; a finished job cannot be cancelled."""
    if state in TERMINAL_VERTEX_STATES:
        raise errors.FailedPrecondition(f"{name} is in state {state} and cannot be cancelled")
    return "JOB_STATE_CANCELLING"


class FakeBackend(Backend):
    def __init__(self) -> None:
        self.project = "fake-project"
        self.region = "us-central1"
        self.jobs: dict[str, RemoteJob] = {}
        self.created: list[dict[str, Any]] = []
        self.cancelled: list[str] = []
        self.fail_creates: list[Exception] = []
        self.crash_after_create = False
        self._ids = itertools.count(1000)
        # Cloud Monitoring's answer per CustomJob id, scripted by a test; an exception raises.
        self.system_metrics: dict[str, list[ReplicaMetrics] | Exception] = {}

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def create_custom_job(self, custom_job: dict[str, Any]) -> RemoteJob:
        if self.fail_creates:
            raise self.fail_creates.pop(0)
        _check_custom_job(custom_job)
        name = f"{self.parent}/customJobs/{next(self._ids)}"
        job = RemoteJob(name=name, display_name=custom_job["displayName"],
                        state="JOB_STATE_QUEUED", labels=dict(custom_job.get("labels", {})),
                        create_time=datetime.now(UTC))
        self.jobs[name] = job
        self.created.append(custom_job)
        if self.crash_after_create:
            self.crash_after_create = False
            raise errors.TransientBackendError("connection lost after the job was created")
        return job

    def find_custom_job(self, display_name: str, labels: dict[str, str]) -> RemoteJob | None:
        for job in self.jobs.values():
            if job.display_name == display_name and all(
                    job.labels.get(k) == v for k, v in labels.items()):
                return job
        return None

    def get_custom_job(self, name: str) -> RemoteJob:
        if name not in self.jobs:
            raise errors.NotFound(name)
        return self.jobs[name]

    def list_custom_jobs(self, filter_: str, *, page_size: int, page_token: str = ""
                         ) -> JobPage:
        """Vertex's list, newest first, filtered by the emulator's own filter (so the fake
        reads a filter exactly as the emulator does); the token is the next page's offset."""
        try:
            matches = compile_job_filter(filter_)
        except FilterError as exc:
            raise errors.InvalidJobSpec(f"ListCustomJobs: Invalid filter: {exc}") from exc
        listed = [job for job in sorted(self.jobs.values(), key=lambda j: -int(j.job_id))
                  if matches(_as_message(job))]
        start = int(page_token or 0)
        end = start + page_size
        return JobPage(listed[start:end], str(end) if end < len(listed) else "")

    def set_state(self, name: str, state: str, **fields: Any) -> None:
        self.jobs[name] = replace(self.jobs[name], state=state, **fields)

    def cancel_custom_job(self, name: str) -> None:
        job = self.get_custom_job(name)
        self.jobs[name] = replace(job, state=_cancelling(job.state, name))
        self.cancelled.append(name)

    def list_log_entries(self, filter_: str, *, page_size: int, page_token: str = "",
                         order_by: str = "timestamp asc") -> LogPage:
        return LogPage([], "")

    def replica_metrics(self, job_id: str, start: datetime, end: datetime
                        ) -> list[ReplicaMetrics]:
        """The scripted series, cut to the window as Cloud Monitoring cuts them."""
        found = self.system_metrics.get(job_id, [])
        if isinstance(found, Exception):
            raise found
        return [replace(m, **{f: [(at, v) for at, v in getattr(m, f) if start <= at <= end]
                              for f in ("cpu", "memory", "memory_bytes", "accelerator",
                                        "accelerator_memory")})
                for m in found]


def _as_message(job: RemoteJob) -> Any:
    """The fields a list filter reads, as a CustomJob message."""
    message = aiplatform_v1.CustomJob.pb()(
        name=job.name, display_name=job.display_name,
        state=aiplatform_v1.JobState[job.state].value, labels=job.labels)
    for field in ("create_time", "start_time", "end_time"):
        value = getattr(job, field)
        if value is not None:
            getattr(message, field).CopyFrom(to_timestamp(int(value.timestamp() * 1e9)))
    return message


class FakeTuningBackend(FakeBackend):
    """The scripted backend with HyperparameterTuningJobs: tests set each job's state and
    trials as Vertex would report them."""

    def __init__(self) -> None:
        super().__init__()
        self.tuning: dict[str, RemoteTuningJob] = {}
        self.tuning_created: list[dict[str, Any]] = []
        self.tuning_cancelled: list[str] = []

    def create_tuning_job(self, tuning_job: dict[str, Any]) -> RemoteTuningJob:
        if self.fail_creates:
            raise self.fail_creates.pop(0)
        _check_tuning_job(tuning_job)
        name = f"{self.parent}/hyperparameterTuningJobs/{next(self._ids)}"
        job = RemoteTuningJob(name=name, display_name=tuning_job["displayName"],
                              state="JOB_STATE_PENDING",
                              labels=dict(tuning_job.get("labels", {})),
                              create_time=datetime.now(UTC))
        self.tuning[name] = job
        self.tuning_created.append(tuning_job)
        if self.crash_after_create:
            self.crash_after_create = False
            raise errors.TransientBackendError("connection lost after the job was created")
        return job

    def find_tuning_job(self, display_name: str, labels: dict[str, str]
                        ) -> RemoteTuningJob | None:
        for job in self.tuning.values():
            if job.display_name == display_name and all(
                    job.labels.get(k) == v for k, v in labels.items()):
                return job
        return None

    def get_tuning_job(self, name: str) -> RemoteTuningJob:
        if name not in self.tuning:
            raise errors.NotFound(name)
        return self.tuning[name]

    def cancel_tuning_job(self, name: str) -> None:
        job = self.get_tuning_job(name)
        self.tuning[name] = replace(job, state=_cancelling(job.state, name))
        self.tuning_cancelled.append(name)

    def set_tuning(self, name: str, **fields: Any) -> None:
        self.tuning[name] = replace(self.tuning[name], **fields)


def _check_tuning_job(tuning_job: dict[str, Any]) -> None:
    where = "hyperparameter_tuning_job"
    if not tuning_job.get("displayName"):
        raise errors.InvalidJobSpec(f"{where}.display_name is required")
    _check_labels(tuning_job.get("labels", {}))
    study = tuning_job.get("studySpec", {})
    for part in ("metrics", "parameters"):
        if not study.get(part):
            raise errors.InvalidJobSpec(f"{where}.study_spec.{part} is required")
    for count in ("maxTrialCount", "parallelTrialCount"):
        if int(tuning_job.get(count, 0)) <= 0:
            raise errors.InvalidJobSpec(f"{where}.{count} must be positive")
    _check_job_spec(tuning_job.get("trialJobSpec", {}), f"{where}.trial_job_spec")
