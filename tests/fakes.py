"""An in-memory Backend for unit tests of the lifecycle's own logic.

The integration tests (tests/integration/) exercise the real client libraries against the real
emulator; this double only lets unit tests script backend answers and crashes precisely.
"""

from __future__ import annotations

import itertools
from typing import Any

from controlplane.backends import errors
from controlplane.backends.base import (
    Backend,
    LogPage,
    RemoteJob,
    RemoteTuningJob,
)


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

    def create_custom_job(self, custom_job: dict[str, Any]) -> RemoteJob:
        if self.fail_creates:
            raise self.fail_creates.pop(0)
        name = f"projects/{self.project}/locations/{self.region}/customJobs/{next(self._ids)}"
        job = RemoteJob(name=name, display_name=custom_job["displayName"],
                        state="JOB_STATE_QUEUED", labels=dict(custom_job.get("labels", {})))
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

    def set_state(self, name: str, state: str, **fields: Any) -> None:
        from dataclasses import replace

        self.jobs[name] = replace(self.jobs[name], state=state, **fields)

    def cancel_custom_job(self, name: str) -> None:
        self.cancelled.append(name)

    def list_log_entries(self, filter_: str, *, page_size: int, page_token: str = "",
                         order_by: str = "timestamp asc") -> LogPage:
        return LogPage([], "")


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
        name = (f"projects/{self.project}/locations/{self.region}/hyperparameterTuningJobs/"
                f"{next(self._ids)}")
        job = RemoteTuningJob(name=name, display_name=tuning_job["displayName"],
                              state="JOB_STATE_PENDING",
                              labels=dict(tuning_job.get("labels", {})))
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
        self.tuning_cancelled.append(name)

    def set_tuning(self, name: str, **fields: Any) -> None:
        from dataclasses import replace

        self.tuning[name] = replace(self.tuning[name], **fields)
