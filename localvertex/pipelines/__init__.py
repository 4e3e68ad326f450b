"""TrainingPipelines (google.cloud.aiplatform.v1.PipelineService): the custom-task pipelines the
SDK's CustomTrainingJob, CustomContainerTrainingJob and CustomPythonPackageTrainingJob create.

  custom_task.py  the custom task's inputs (its CustomJobSpec) made into the backing CustomJob
  store.py        the pipelines in SQLite, beside the jobs
  runner.py       one thread per pipeline: its CustomJob run by the job manager, then the Model
  service.py      Create, Get, List, Cancel and Delete
"""
