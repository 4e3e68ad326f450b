"""google.cloud.aiplatform.v1.PipelineService: the TrainingPipeline methods.

Create checks the custom task's inputs as CreateCustomJob checks a job (custom_task.py) and the
model_to_upload as UploadModel checks a model, so a bad pipeline is refused at once with the
field named, and starts its PipelineRunner (runner.py); Get, List (Vertex's filter, with
PipelineState's names), Cancel (CANCELLING, for the runner to cancel the job) and Delete (of a
finished pipeline, a done operation) are what JobService's collections answer alike
(jobs/resources.py).
"""

from __future__ import annotations

import grpc
from google.cloud import aiplatform_v1
from google.protobuf import empty_pb2

from localvertex.core.resources import parse_parent
from localvertex.core.runner_set import RunnerSet
from localvertex.jobs.resources import Collection
from localvertex.jobs.service import JobService
from localvertex.pipelines.custom_task import backing_custom_job
from localvertex.pipelines.runner import PipelineRunner
from localvertex.pipelines.store import (
    PipelineRecord,
    PipelineState,
    PipelineStore,
    TrainingPipelinePb,
)
from localvertex.serving.models import ModelService, check_model

SERVICE = "google.cloud.aiplatform.v1.PipelineService"

CreateRequest = aiplatform_v1.CreateTrainingPipelineRequest.pb()
GetRequest = aiplatform_v1.GetTrainingPipelineRequest.pb()
ListRequest = aiplatform_v1.ListTrainingPipelinesRequest.pb()
ListResponse = aiplatform_v1.ListTrainingPipelinesResponse.pb()
CancelRequest = aiplatform_v1.CancelTrainingPipelineRequest.pb()
DeleteRequest = aiplatform_v1.DeleteTrainingPipelineRequest.pb()

_OUTPUT_ONLY = ("name", "state", "error", "create_time", "start_time", "end_time",
                "update_time", "training_task_metadata")


class TrainingPipelines:
    """The pipelines' RPCs and their runners."""

    def __init__(self, jobs: JobService, models: ModelService, store: PipelineStore) -> None:
        self.jobs = jobs
        self.models = models
        self.store = store
        self.pipelines = Collection("TrainingPipeline", "trainingPipelines", store,
                                    operation_ids=jobs.jobs.new_id, token_key="pipeline\n",
                                    states=PipelineState)
        self.runners: RunnerSet[PipelineRunner] = RunnerSet(
            lambda pipeline_id, finished: PipelineRunner(jobs, models, store, pipeline_id,
                                                         finished))

    # -- runners -------------------------------------------------------------------------------

    def start(self, pipeline_id: str) -> None:
        self.runners.start(pipeline_id)

    def resume(self) -> None:
        """Carry on the pipelines an earlier emulator left unfinished (their CustomJobs are
        resumed by the job manager)."""
        for record in self.store.unfinished():
            self.start(record.id)

    def shutdown(self, timeout: float = 5.0) -> None:
        self.runners.shutdown(timeout)

    # -- RPCs ----------------------------------------------------------------------------------

    def create(self, request, context: grpc.ServicerContext):
        project, location = parse_parent(request.parent)
        pipeline = TrainingPipelinePb()
        pipeline.CopyFrom(request.training_pipeline)
        for name in _OUTPUT_ONLY:
            pipeline.ClearField(name)
        pipeline.model_to_upload.ClearField("name")
        if not request.training_pipeline.HasField("model_to_upload"):
            pipeline.ClearField("model_to_upload")
        backing_custom_job(pipeline)  # refuses, naming the field, what cannot run
        if pipeline.HasField("model_to_upload"):
            check_model(pipeline.model_to_upload, "training_pipeline.model_to_upload")
            self.models.check_parent_model(request.parent, pipeline.parent_model,
                                           "training_pipeline.parent_model")
        pipeline_id = self.jobs.jobs.new_id()
        self.pipelines.stamp_new(pipeline, request.parent, pipeline_id,
                                 PipelineState.PIPELINE_STATE_QUEUED)
        self.store.insert(PipelineRecord(id=pipeline_id, project=project, location=location,
                                         job=pipeline))
        self.start(pipeline_id)
        return pipeline

    def get(self, request, context: grpc.ServicerContext):
        return self.pipelines.load(request.name).job

    def list(self, request, context: grpc.ServicerContext):
        records, token = self.pipelines.page(request)
        response = ListResponse(next_page_token=token)
        response.training_pipelines.extend(record.job for record in records)
        return response

    def cancel(self, request, context: grpc.ServicerContext):
        record = self.pipelines.cancel(request.name)
        self.runners.wake_or_start(record.id)  # its runner cancels the job, ends the pipeline
        return empty_pb2.Empty()

    def delete(self, request, context: grpc.ServicerContext):
        return self.pipelines.delete(request.name)

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "CreateTrainingPipeline": (self.create, CreateRequest),
            "GetTrainingPipeline": (self.get, GetRequest),
            "ListTrainingPipelines": (self.list, ListRequest),
            "CancelTrainingPipeline": (self.cancel, CancelRequest),
            "DeleteTrainingPipeline": (self.delete, DeleteRequest),
        }
