"""The custom training task: a TrainingPipeline whose training_task_definition is Vertex's custom
task schema runs one CustomJob, whose spec is the pipeline's training_task_inputs (the SDK's
CustomTrainingJob family writes worker_pool_specs, base_output_directory and, when asked,
scheduling, service_account, network, ... there: VERTEX_FACTS.md A10). Vertex names that job
in training_task_metadata.backingCustomJob, which the SDK reads to show it.

What else a pipeline can ask for (a dataset to export, another task definition: AutoML) is
refused with the field that asks for it.
"""

from __future__ import annotations

from google.protobuf import json_format

from localvertex.core.errors import ApiError, invalid
from localvertex.jobs.store import CustomJobPb
from localvertex.jobs.validation import validate_custom_job

CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
BACKING_JOB = "backingCustomJob"
WHERE = "training_pipeline"


def backing_custom_job(pipeline) -> CustomJobPb:  # type: ignore[valid-type]
    """The CustomJob a custom-task pipeline runs, checked as CreateCustomJob checks one; its
    errors name the pipeline's fields. INVALID_ARGUMENT for what the emulator cannot run."""
    if pipeline.training_task_definition != CUSTOM_TASK:
        raise invalid(
            f"{WHERE}.training_task_definition {pipeline.training_task_definition!r}: the "
            f"emulator runs custom training only ({CUSTOM_TASK}); AutoML tasks are Vertex's.")
    if pipeline.HasField("input_data_config") and pipeline.input_data_config.dataset_id:
        raise invalid(
            f"{WHERE}.input_data_config.dataset_id: the emulator has no Vertex datasets to "
            "export; read the data from the job's own arguments instead.")
    inputs = json_format.MessageToDict(pipeline.training_task_inputs)
    if not isinstance(inputs, dict):
        raise invalid(f"{WHERE}.training_task_inputs must be an object (a CustomJobSpec).")
    job = CustomJobPb()
    try:
        json_format.ParseDict(inputs, job.job_spec)
    except json_format.ParseError as exc:
        raise invalid(f"{WHERE}.training_task_inputs is not a CustomJobSpec: {exc}") from exc
    job.display_name = pipeline.display_name
    job.labels.update(dict(pipeline.labels))
    if pipeline.HasField("encryption_spec"):
        job.encryption_spec.CopyFrom(pipeline.encryption_spec)
    try:
        validate_custom_job(job)
    except ApiError as exc:
        raise ApiError(exc.code, _as_pipeline_fields(exc.message), exc.details) from exc
    return job


def _as_pipeline_fields(message: str) -> str:
    """A CustomJob check's message with the pipeline's field names in it."""
    return (message.replace("custom_job.job_spec.", f"{WHERE}.training_task_inputs.")
            .replace("custom_job.display_name", f"{WHERE}.display_name")
            .replace("custom_job.labels", f"{WHERE}.labels"))
