"""google.cloud.aiplatform.v1.JobService: the HyperparameterTuningJob methods.

Create checks what Vertex checks that a local run depends on (the study and the trial job spec,
as CreateCustomJob checks a CustomJob) and starts a TuningRunner (tuning_runner.py); Get
returns the job with its trials; List leaves the trials out, as Vertex does (VERTEX_FACTS.md
A1); Cancel moves the job to CANCELLING for its runner to stop the trials; Delete, of a
finished job, is a done long-running operation.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time

import grpc
from google.cloud import aiplatform_v1
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2

from localvertex.core.errors import failed_precondition, invalid, not_found
from localvertex.core.filters import FilterError
from localvertex.core.timeutil import to_timestamp
from localvertex.jobfilter import compile_job_filter
from localvertex.jobs_service import (
    DeleteOperationMetadata,
    _check_labels,
    _decode_token,
    _encode_token,
    _parse_parent,
    validate_custom_job,
)
from localvertex.jobstore import CustomJobPb, JobState
from localvertex.manager import JobManager
from localvertex.tuning_runner import TuningRunner
from localvertex.tuning_store import TuningJobPb, TuningRecord, TuningStore

CreateRequest = aiplatform_v1.CreateHyperparameterTuningJobRequest.pb()
GetRequest = aiplatform_v1.GetHyperparameterTuningJobRequest.pb()
ListRequest = aiplatform_v1.ListHyperparameterTuningJobsRequest.pb()
ListResponse = aiplatform_v1.ListHyperparameterTuningJobsResponse.pb()
CancelRequest = aiplatform_v1.CancelHyperparameterTuningJobRequest.pb()
DeleteRequest = aiplatform_v1.DeleteHyperparameterTuningJobRequest.pb()
Algorithm = aiplatform_v1.StudySpec.Algorithm

_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs/([^/]+)$")
_DEFAULT_PAGE_SIZE = 100
_MAX_PAGE_SIZE = 1000
_OUTPUT_ONLY = ("name", "state", "create_time", "start_time", "end_time", "update_time", "error",
                "trials")
_GRID_KINDS = ("integer_value_spec", "discrete_value_spec", "categorical_value_spec")


def validate_tuning_job(job: TuningJobPb) -> None:  # type: ignore[valid-type]
    where = "hyperparameter_tuning_job"
    if not job.display_name or len(job.display_name) > 128:
        raise invalid(f"{where}.display_name is required, at most 128 characters.")
    _check_labels(job.labels)
    study = job.study_spec
    if not study.metrics:
        raise invalid(f"{where}.study_spec.metrics is required.")
    if not study.parameters:
        raise invalid(f"{where}.study_spec.parameters is required.")
    for i, spec in enumerate(study.parameters):
        kind = spec.WhichOneof("parameter_value_spec")
        if kind is None:
            raise invalid(f"{where}.study_spec.parameters[{i}] has no value spec.")
        if study.algorithm == Algorithm.GRID_SEARCH and kind not in _GRID_KINDS:
            raise invalid(
                f"{where}.study_spec.parameters[{i}]: GRID_SEARCH takes only INTEGER, DISCRETE "
                "and CATEGORICAL parameters.")
    if job.max_trial_count <= 0:
        raise invalid(f"{where}.max_trial_count must be positive.")
    if job.parallel_trial_count <= 0:
        raise invalid(f"{where}.parallel_trial_count must be positive.")
    if job.max_failed_trial_count < 0:
        raise invalid(f"{where}.max_failed_trial_count must not be negative.")
    trial = CustomJobPb()
    trial.display_name = job.display_name
    trial.job_spec.CopyFrom(job.trial_job_spec)
    try:
        validate_custom_job(trial)
    except grpc.RpcError as exc:
        raise invalid(f"{where}.trial_job_spec: {exc}") from exc


class TuningJobs:
    """The tuning jobs' RPCs and their runners."""

    def __init__(self, manager: JobManager, store: TuningStore) -> None:
        self.manager = manager
        self.store = store
        self._runners: dict[str, TuningRunner] = {}
        self._lock = threading.Lock()
        self._stopping = False

    # -- runners -------------------------------------------------------------------------------

    def start(self, job_id: str) -> None:
        with self._lock:
            if self._stopping or job_id in self._runners:
                return
            runner = self._runners[job_id] = TuningRunner(self, job_id)
        runner.start()

    def resume(self) -> None:
        """Carry on the tuning jobs an earlier emulator left unfinished (their trials'
        CustomJobs are resumed by the job manager)."""
        for record in self.store.unfinished():
            self.start(record.id)

    def runner_finished(self, job_id: str) -> None:
        with self._lock:
            self._runners.pop(job_id, None)

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stopping = True
            runners = list(self._runners.values())
        for runner in runners:
            runner.stop()
        for runner in runners:
            runner.join(timeout)

    def cancel_custom_job(self, custom_job_id: str) -> None:
        """Cancel a trial's CustomJob as CancelCustomJob does."""
        def to_cancelling(record) -> None:
            if not record.terminal and record.state != JobState.JOB_STATE_CANCELLING:
                record.job.state = JobState.JOB_STATE_CANCELLING
                record.job.update_time.CopyFrom(to_timestamp(time.time_ns()))

        try:
            self.manager.jobs.update(custom_job_id, to_cancelling)
        except KeyError:
            return
        self.manager.cancel(custom_job_id)

    # -- RPCs ----------------------------------------------------------------------------------

    def _load(self, name: str) -> TuningRecord:
        m = _NAME.match(name)
        if not m:
            raise invalid(f"name {name!r} is not "
                          "projects/PROJECT/locations/LOCATION/hyperparameterTuningJobs/ID.")
        record = self.store.get(m.group(3))
        if record is None or (record.project, record.location) != (m.group(1), m.group(2)):
            raise not_found(f'HyperparameterTuningJob "{name}" not found.')
        return record

    def create(self, request, context: grpc.ServicerContext):
        project, location = _parse_parent(request.parent)
        job = TuningJobPb()
        job.CopyFrom(request.hyperparameter_tuning_job)
        for name in _OUTPUT_ONLY:
            job.ClearField(name)
        validate_tuning_job(job)
        job_id = self.manager.jobs.next_id()
        now = to_timestamp(time.time_ns())
        job.name = f"{request.parent}/hyperparameterTuningJobs/{job_id}"
        job.state = JobState.JOB_STATE_PENDING
        job.create_time.CopyFrom(now)
        job.update_time.CopyFrom(now)
        self.store.insert(TuningRecord(id=job_id, project=project, location=location, job=job))
        self.start(job_id)
        return job

    def get(self, request, context: grpc.ServicerContext):
        return self._load(request.name).job

    def list(self, request, context: grpc.ServicerContext):
        project, location = _parse_parent(request.parent)
        try:
            predicate = compile_job_filter(request.filter)
        except FilterError as exc:
            raise invalid(f"Invalid filter: {exc}") from exc
        key = hashlib.sha256(f"hptj\n{request.parent}\n{request.filter}".encode()).hexdigest()[:16]
        after = _decode_token(request.page_token, key) if request.page_token else None
        size = min(request.page_size if request.page_size > 0 else _DEFAULT_PAGE_SIZE,
                   _MAX_PAGE_SIZE)
        records = [r for r in self.store.list(project, location)
                   if (after is None or int(r.id) < after) and predicate(r.job)]
        response = ListResponse()
        for record in records[:size]:
            listed = TuningJobPb()
            listed.CopyFrom(record.job)
            listed.ClearField("trials")  # as Vertex: Get each job for its trials
            response.hyperparameter_tuning_jobs.append(listed)
        if len(records) > size:
            response.next_page_token = _encode_token(int(records[size - 1].id), key)
        return response

    def cancel(self, request, context: grpc.ServicerContext):
        record = self._load(request.name)

        def to_cancelling(r: TuningRecord) -> None:
            if r.terminal:
                raise failed_precondition(
                    f"HyperparameterTuningJob {request.name} is in state "
                    f"{JobState(r.job.state).name} and cannot be cancelled.")
            r.job.state = JobState.JOB_STATE_CANCELLING
            r.job.update_time.CopyFrom(to_timestamp(time.time_ns()))

        self.store.update(record.id, to_cancelling)
        with self._lock:
            runner = self._runners.get(record.id)
        if runner is not None:
            runner.wake()
        else:
            self.start(record.id)  # its runner ends it (and any trials still running)
        return empty_pb2.Empty()

    def delete(self, request, context: grpc.ServicerContext):
        record = self._load(request.name)
        if not record.terminal:
            raise failed_precondition(
                f"HyperparameterTuningJob {request.name} is in state "
                f"{JobState(record.job.state).name}; only a finished job can be deleted. "
                "Cancel it first.")
        self.store.delete(record.id)
        now = to_timestamp(time.time_ns())
        metadata = DeleteOperationMetadata()
        metadata.generic_metadata.create_time.CopyFrom(now)
        metadata.generic_metadata.update_time.CopyFrom(now)
        operation = operations_pb2.Operation(
            name=f"projects/{record.project}/locations/{record.location}/operations/"
            f"{self.manager.jobs.next_id()}", done=True)
        operation.metadata.Pack(metadata)
        operation.response.Pack(empty_pb2.Empty())
        return operation

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "CreateHyperparameterTuningJob": (self.create, CreateRequest),
            "GetHyperparameterTuningJob": (self.get, GetRequest),
            "ListHyperparameterTuningJobs": (self.list, ListRequest),
            "CancelHyperparameterTuningJob": (self.cancel, CancelRequest),
            "DeleteHyperparameterTuningJob": (self.delete, DeleteRequest),
        }
