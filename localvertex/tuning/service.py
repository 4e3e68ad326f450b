"""google.cloud.aiplatform.v1.JobService: the HyperparameterTuningJob methods.

Create checks what Vertex checks that a local run depends on (the study and the trial job spec,
as CreateCustomJob checks a CustomJob) and starts a TuningRunner (runner.py); Get
returns the job with its trials; List leaves the trials out, as Vertex does (VERTEX_FACTS.md
A1); Cancel moves the job to CANCELLING for its runner to stop the trials; Delete, of a
finished job, is a done long-running operation.
"""

from __future__ import annotations

import grpc
from google.cloud import aiplatform_v1
from google.protobuf import empty_pb2

from localvertex.core.errors import invalid
from localvertex.core.resources import parse_parent
from localvertex.core.runner_set import RunnerSet
from localvertex.jobs.manager import JobManager
from localvertex.jobs.resources import Collection
from localvertex.jobs.store import CustomJobPb, JobState
from localvertex.jobs.validation import check_labels, validate_custom_job
from localvertex.tuning.runner import TuningRunner
from localvertex.tuning.store import TuningJobPb, TuningRecord, TuningStore

CreateRequest = aiplatform_v1.CreateHyperparameterTuningJobRequest.pb()
GetRequest = aiplatform_v1.GetHyperparameterTuningJobRequest.pb()
ListRequest = aiplatform_v1.ListHyperparameterTuningJobsRequest.pb()
ListResponse = aiplatform_v1.ListHyperparameterTuningJobsResponse.pb()
CancelRequest = aiplatform_v1.CancelHyperparameterTuningJobRequest.pb()
DeleteRequest = aiplatform_v1.DeleteHyperparameterTuningJobRequest.pb()
Algorithm = aiplatform_v1.StudySpec.Algorithm

_OUTPUT_ONLY = ("name", "state", "create_time", "start_time", "end_time", "update_time", "error",
                "trials")
_GRID_KINDS = ("integer_value_spec", "discrete_value_spec", "categorical_value_spec")


def validate_tuning_job(job: TuningJobPb) -> None:  # type: ignore[valid-type]
    where = "hyperparameter_tuning_job"
    if not job.display_name or len(job.display_name) > 128:
        raise invalid(f"{where}.display_name is required, at most 128 characters.")
    check_labels(job.labels)
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
    validate_custom_job(trial)  # its errors name the field they refuse


class TuningJobs:
    """The tuning jobs' RPCs and their runners."""

    def __init__(self, manager: JobManager, store: TuningStore) -> None:
        self.manager = manager
        self.store = store
        self.tuning_jobs = Collection("HyperparameterTuningJob", "hyperparameterTuningJobs",
                                      store, operation_ids=manager.jobs.new_id,
                                      token_key="hptj\n")
        self.runners: RunnerSet[TuningRunner] = RunnerSet(
            lambda job_id, finished: TuningRunner(manager, store, job_id, finished))

    # -- runners -------------------------------------------------------------------------------

    def start(self, job_id: str) -> None:
        self.runners.start(job_id)

    def resume(self) -> None:
        """Carry on the tuning jobs an earlier emulator left unfinished (their trials'
        CustomJobs are resumed by the job manager)."""
        for record in self.store.unfinished():
            self.start(record.id)

    def shutdown(self, timeout: float = 5.0) -> None:
        self.runners.shutdown(timeout)

    # -- RPCs ----------------------------------------------------------------------------------

    def create(self, request, context: grpc.ServicerContext):
        project, location = parse_parent(request.parent)
        job = TuningJobPb()
        job.CopyFrom(request.hyperparameter_tuning_job)
        for name in _OUTPUT_ONLY:
            job.ClearField(name)
        validate_tuning_job(job)
        job_id = self.manager.jobs.new_id()
        self.tuning_jobs.stamp_new(job, request.parent, job_id, JobState.JOB_STATE_PENDING)
        self.store.insert(TuningRecord(id=job_id, project=project, location=location, job=job))
        self.start(job_id)
        return job

    def get(self, request, context: grpc.ServicerContext):
        return self.tuning_jobs.load(request.name).job

    def list(self, request, context: grpc.ServicerContext):
        records, token = self.tuning_jobs.page(request)
        response = ListResponse(next_page_token=token)
        for record in records:
            listed = TuningJobPb()
            listed.CopyFrom(record.job)
            listed.ClearField("trials")  # as Vertex: Get each job for its trials
            response.hyperparameter_tuning_jobs.append(listed)
        return response

    def cancel(self, request, context: grpc.ServicerContext):
        record = self.tuning_jobs.cancel(request.name)
        self.runners.wake_or_start(record.id)  # its runner ends it and any trials still running
        return empty_pb2.Empty()

    def delete(self, request, context: grpc.ServicerContext):
        return self.tuning_jobs.delete(request.name)

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "CreateHyperparameterTuningJob": (self.create, CreateRequest),
            "GetHyperparameterTuningJob": (self.get, GetRequest),
            "ListHyperparameterTuningJobs": (self.list, ListRequest),
            "CancelHyperparameterTuningJob": (self.cancel, CancelRequest),
            "DeleteHyperparameterTuningJob": (self.delete, DeleteRequest),
        }
