"""Running a custom-task TrainingPipeline as Vertex runs it: one thread per pipeline.

The runner creates the backing CustomJob through JobService's own create (its checks, the
region's quota, the job manager: replicas, restarts, log entries like any CustomJob), names it
in training_task_metadata.backingCustomJob, and follows it:

  pipeline  QUEUED -> PENDING (job created) -> RUNNING (job RUNNING) -> SUCCEEDED | FAILED
            | CANCELLING -> CANCELLED

When the job succeeds and the pipeline carries a model_to_upload, the runner uploads it as
ModelService.UploadModel does, with artifact_uri the job's AIP_MODEL_DIR, and puts the Model's
name and version in model_to_upload; a job that wrote nothing there fails the pipeline (Vertex
fails such a pipeline; its exact message is UNCONFIRMED). A failed job fails the pipeline with
the job's error. Cancel cancels the job and ends CANCELLED (code 1). Everything is in the stored
pipeline, so after an emulator restart a new runner carries on with the same job.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from google.cloud import aiplatform_v1
from google.protobuf import struct_pb2

from localvertex.core.errors import ApiError
from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.resources import to_cancelling
from localvertex.jobs.service import JobService
from localvertex.jobs.store import JobState
from localvertex.jobs.updates import CODE_CANCELLED, CODE_INTERNAL
from localvertex.pipelines.custom_task import BACKING_JOB, backing_custom_job
from localvertex.pipelines.store import PipelineRecord, PipelineState, PipelineStore
from localvertex.replicas.storage import local_path
from localvertex.serving.models import ModelService

log = logging.getLogger(__name__)

CreateCustomJobRequest = aiplatform_v1.CreateCustomJobRequest.pb()
# google.rpc.Code of a pipeline whose job wrote no model (Vertex's own code is UNCONFIRMED).
CODE_FAILED_PRECONDITION = 9
_TICK_S = 0.2


class PipelineRunner:
    """One pipeline's CustomJob and Model, on its own thread."""

    def __init__(self, jobs: JobService, models: ModelService, store: PipelineStore,
                 pipeline_id: str, finished: Callable[[str], None]) -> None:
        self.jobs = jobs
        self.models = models
        self.store = store
        self.pipeline_id = pipeline_id
        self._finished = finished  # told the pipeline id when the thread ends
        self.thread = threading.Thread(target=self.run, name=f"pipeline-{pipeline_id}",
                                       daemon=True)
        self._wake = threading.Event()
        self._stopping = False

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
            log.exception("training pipeline %s: emulator error", self.pipeline_id)
            with contextlib.suppress(KeyError):
                self._finish(PipelineState.PIPELINE_STATE_FAILED, CODE_INTERNAL,
                             f"Emulator error: {exc}")
        finally:
            self._finished(self.pipeline_id)

    def _run(self) -> None:
        record = self.store.get(self.pipeline_id)
        if record is None or record.terminal:
            return
        job_id = _backing_job_id(record)
        if not job_id and record.state != PipelineState.PIPELINE_STATE_CANCELLING:
            job_id = self._start_job(record)
            if job_id is None:
                return
        cancel_sent = False
        while not self._stopping:
            record = self.store.get(self.pipeline_id)
            if record is None or record.terminal:
                return
            child = self.jobs.jobs.get(job_id) if job_id else None
            if record.state == PipelineState.PIPELINE_STATE_CANCELLING:
                if child is not None and not child.terminal:
                    if not cancel_sent:
                        self._cancel_job(job_id)
                        cancel_sent = True
                else:
                    self._finish(PipelineState.PIPELINE_STATE_CANCELLED, CODE_CANCELLED,
                                 "CANCELED")
                    return
            elif child is None:
                self._finish(PipelineState.PIPELINE_STATE_FAILED, CODE_INTERNAL,
                             f"The pipeline's CustomJob {job_id} is gone.")
                return
            elif child.terminal:
                self._job_ended(record, child)
                return
            elif child.state == JobState.JOB_STATE_RUNNING:
                self._set_state(PipelineState.PIPELINE_STATE_RUNNING)
            self._wake.wait(_TICK_S)
            self._wake.clear()

    def _start_job(self, record: PipelineRecord) -> str | None:
        """Create the backing CustomJob (None, and the pipeline FAILED, if it is refused)."""
        job = backing_custom_job(record.job)
        parent = f"projects/{record.project}/locations/{record.location}"
        try:
            created = self.jobs.create_custom_job(
                CreateCustomJobRequest(parent=parent, custom_job=job), None)
        except ApiError as exc:
            self._finish(PipelineState.PIPELINE_STATE_FAILED, exc.code.value[0], exc.message)
            return None

        def change(r: PipelineRecord) -> None:
            metadata = struct_pb2.Struct()
            metadata.update({BACKING_JOB: created.name})
            r.job.training_task_metadata.struct_value.CopyFrom(metadata)
            _move(r, PipelineState.PIPELINE_STATE_PENDING)

        self.store.update(self.pipeline_id, change)
        return created.name.rsplit("/", 1)[-1]

    def _cancel_job(self, job_id: str) -> None:
        """Cancel the CustomJob as CancelCustomJob does (one that has ended stays so)."""
        try:
            self.jobs.jobs.update(job_id, to_cancelling)
        except KeyError:
            return
        self.jobs.manager.cancel(job_id)

    def _job_ended(self, record: PipelineRecord, child) -> None:
        if child.state == JobState.JOB_STATE_SUCCEEDED:
            self._succeeded(record, child)
            return
        error = child.job.error
        if child.state == JobState.JOB_STATE_CANCELLED:  # cancelled on its own, not through us
            self._finish(PipelineState.PIPELINE_STATE_CANCELLED, CODE_CANCELLED,
                         f"The pipeline's CustomJob {child.id} was cancelled.")
            return
        self._finish(PipelineState.PIPELINE_STATE_FAILED, error.code or CODE_INTERNAL,
                     f"Job failed: {error.message or JobState(child.state).name}")

    def _succeeded(self, record: PipelineRecord, child) -> None:
        pipeline = record.job
        if not pipeline.HasField("model_to_upload"):
            self._finish(PipelineState.PIPELINE_STATE_SUCCEEDED, None, None)
            return
        base = child.job.job_spec.base_output_directory.output_uri_prefix
        model_uri = f"{base.rstrip('/')}/model/" if base else ""
        folder = Path(local_path(self.jobs.manager.settings.data_dir, model_uri)) \
            if model_uri else None
        if folder is None or not folder.is_dir() or not any(folder.iterdir()):
            where = model_uri or "unset: training_task_inputs has no base_output_directory"
            self._finish(PipelineState.PIPELINE_STATE_FAILED, CODE_FAILED_PRECONDITION,
                         f"The job wrote no model to AIP_MODEL_DIR ({where}), and the "
                         "pipeline asks for one (model_to_upload).")
            return
        requested = type(pipeline.model_to_upload)()
        requested.CopyFrom(pipeline.model_to_upload)
        if not requested.artifact_uri:
            requested.artifact_uri = model_uri
        requested.training_pipeline = pipeline.name
        parent = f"projects/{record.project}/locations/{record.location}"
        try:
            model = self.models.register(parent, requested, pipeline.model_id,
                                         pipeline.parent_model, "model_to_upload")
        except ApiError as exc:
            self._finish(PipelineState.PIPELINE_STATE_FAILED, exc.code.value[0], exc.message)
            return

        def uploaded(r: PipelineRecord) -> None:
            r.job.model_to_upload.CopyFrom(model)

        self.store.update(self.pipeline_id, uploaded)
        self._finish(PipelineState.PIPELINE_STATE_SUCCEEDED, None, None)

    # -- the pipeline's record -------------------------------------------------------------------

    def _set_state(self, state: int) -> None:
        self.store.update(self.pipeline_id, lambda r: _move(r, state))

    def _finish(self, state: int, code: int | None, message: str | None) -> None:
        def change(r: PipelineRecord) -> None:
            if r.terminal:
                return
            now = to_timestamp(time.time_ns())
            r.job.state = state
            r.job.update_time.CopyFrom(now)
            r.job.end_time.CopyFrom(now)
            if code is not None:
                r.job.error.code = code
                r.job.error.message = message or ""

        self.store.update(self.pipeline_id, change)


def _move(record: PipelineRecord, state: int) -> None:
    """A step forward (never out of CANCELLING or an end); start_time at the first RUNNING."""
    if record.terminal or record.state in (state, PipelineState.PIPELINE_STATE_CANCELLING):
        return
    now = to_timestamp(time.time_ns())
    record.job.state = state
    record.job.update_time.CopyFrom(now)
    if state == PipelineState.PIPELINE_STATE_RUNNING and not record.job.HasField("start_time"):
        record.job.start_time.CopyFrom(now)


def _backing_job_id(record: PipelineRecord) -> str:
    metadata = record.job.training_task_metadata
    if metadata.WhichOneof("kind") != "struct_value":
        return ""
    name = metadata.struct_value.fields.get(BACKING_JOB)
    return name.string_value.rsplit("/", 1)[-1] if name is not None else ""
