"""google.cloud.aiplatform.v1.JobService: the CustomJob methods.

Create checks the job (validation.py) and the region's quota (capacity.py) and hands it to the
job manager; Get, List, Cancel and Delete are what JobService's collections share
(resources.py). The HyperparameterTuningJob methods are tuning/service.py's.
"""

from __future__ import annotations

import threading

import grpc
from google.cloud import aiplatform_v1
from google.protobuf import empty_pb2

from localvertex.core.errors import invalid
from localvertex.core.resources import parse_parent
from localvertex.jobs import synthetic_schedule
from localvertex.jobs.capacity import check_quota
from localvertex.jobs.manager import JobManager
from localvertex.jobs.resources import Collection
from localvertex.jobs.store import CustomJobPb, JobRecord, JobState
from localvertex.jobs.validation import check_persistent_resource, validate_custom_job

SERVICE = "google.cloud.aiplatform.v1.JobService"

CreateCustomJobRequest = aiplatform_v1.CreateCustomJobRequest.pb()
GetCustomJobRequest = aiplatform_v1.GetCustomJobRequest.pb()
ListCustomJobsRequest = aiplatform_v1.ListCustomJobsRequest.pb()
ListCustomJobsResponse = aiplatform_v1.ListCustomJobsResponse.pb()
CancelCustomJobRequest = aiplatform_v1.CancelCustomJobRequest.pb()
DeleteCustomJobRequest = aiplatform_v1.DeleteCustomJobRequest.pb()

# Output-only fields: the service's to set.
_OUTPUT_ONLY = ("name", "state", "create_time", "start_time", "end_time", "update_time", "error",
                "web_access_uris")


class JobService:
    def __init__(self, manager: JobManager) -> None:
        self.manager = manager
        self.jobs = manager.jobs
        self.custom_jobs = Collection("CustomJob", "customJobs", manager.jobs,
                                      operation_ids=manager.jobs.new_id)
        self._admit = threading.Lock()

    def create_custom_job(self, request, context: grpc.ServicerContext):
        project, location = parse_parent(request.parent)
        job = CustomJobPb()
        job.CopyFrom(request.custom_job)
        validate_custom_job(job)
        if self.manager.settings.synthetic:
            problem = synthetic_schedule.check(job.job_spec)
            if problem:
                raise invalid(f"custom_job.job_spec: {problem}.")
        for output_field in _OUTPUT_ONLY:
            job.ClearField(output_field)
        if job.job_spec.persistent_resource_id:
            check_persistent_resource(
                self.manager.persistent_resource(
                    f"{request.parent}/persistentResources/"
                    f"{job.job_spec.persistent_resource_id}"), job)
        with self._admit:  # the quota check and the insert, one create at a time
            check_quota(self.manager.capacity, self.jobs, project, location, job)
            job_id = self.jobs.new_id()
            self.custom_jobs.stamp_new(job, request.parent, job_id, JobState.JOB_STATE_QUEUED)
            self.jobs.insert(JobRecord(id=job_id, project=project, location=location, job=job))
        self.manager.start(job_id)
        return job

    def get_custom_job(self, request, context: grpc.ServicerContext):
        return self.custom_jobs.load(request.name).job

    def list_custom_jobs(self, request, context: grpc.ServicerContext):
        mask = request.read_mask if request.HasField("read_mask") and \
            request.read_mask.paths else None
        if mask is not None and not mask.IsValidForDescriptor(CustomJobPb.DESCRIPTOR):
            raise invalid(f"read_mask {list(mask.paths)} names a field CustomJob does not have.")
        records, token = self.custom_jobs.page(request)
        response = ListCustomJobsResponse(next_page_token=token)
        for record in records:
            if mask is None:
                response.custom_jobs.append(record.job)
            else:  # only the fields the caller reads: a page of many jobs stays small
                mask.MergeMessage(record.job, response.custom_jobs.add())
        return response

    def cancel_custom_job(self, request, context: grpc.ServicerContext):
        record = self.custom_jobs.cancel(request.name)
        self.manager.cancel(record.id)
        return empty_pb2.Empty()

    def delete_custom_job(self, request, context: grpc.ServicerContext):
        return self.custom_jobs.delete(request.name)

    def methods(self) -> dict[str, tuple[object, object]]:
        """gRPC method name -> (handler, request message class)."""
        return {
            "CreateCustomJob": (self.create_custom_job, CreateCustomJobRequest),
            "GetCustomJob": (self.get_custom_job, GetCustomJobRequest),
            "ListCustomJobs": (self.list_custom_jobs, ListCustomJobsRequest),
            "CancelCustomJob": (self.cancel_custom_job, CancelCustomJobRequest),
            "DeleteCustomJob": (self.delete_custom_job, DeleteCustomJobRequest),
        }
