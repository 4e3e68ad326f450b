"""localvertex: a local emulator of Vertex AI, Cloud Logging and Cloud Storage.

It serves the real gRPC protocols of google.cloud.aiplatform.v1 (JobService with CustomJobs and
HyperparameterTuningJobs, PipelineService's TrainingPipelines, PersistentResourceService, also
in v1beta1, ModelService, EndpointService, PredictionService),
google.logging.v2.LoggingServiceV2 and the Cloud Quotas API, so Google's own GAPIC clients work
against it unchanged (see client.py). Jobs run as local processes, one per replica, with the
environment a Vertex replica gets; what they print becomes Cloud Logging entries. Run it with
`python -m localvertex --data-dir DIR`; its admin command line is `python -m localvertex.admin`.

A room per service, as moto has one per AWS service:
  jobs/          CustomJobs: the JobService methods and their checks, the store, the filter,
                 the manager and one runner per job (restart policy, armed preemptions, the
                 quota and stockouts a job meets, the writes to its record)
  tuning/        HyperparameterTuningJobs: the methods, the store, the runner whose trials are
                 CustomJobs, the study's search, the metrics trials report
  pipelines/     TrainingPipelines of the custom task: the methods, the store, the runner
                 whose CustomJob is the manager's and whose Model is serving's
  serving/       Models, Endpoints, Predictions: deployments as local model servers, the admin
                 calls for endpoints, Artifact Registry's images
  clusters/      PersistentResources and the local Ray clusters that stand in for Ray on Vertex
  cloudlogging/  LoggingServiceV2: log entries, their store, Cloud Logging's filter, the read
                 quota
  quotas/        accelerator quotas by region (the metric table), stockouts, the Cloud Quotas
                 API, the resource management requests per minute per region
  admin/         what tests need and Vertex does not offer: preemptions, faults, quotas,
                 stockouts, images; its client and command line
  replicas/      the process runtime jobs, model servers and Ray nodes share: what a replica runs
                 and its environment, process groups, the sandbox, the local stand-in for
                 Cloud Storage (gs://), pythonPackageSpec packages
  storage/       Cloud Storage's JSON API over the buckets' folders (its own port; what
                 Google's storage client and gcsfs call with STORAGE_EMULATOR_HOST) and its
                 IAM stand-in: a door in each job's network namespace for its team alone
  core/          what the rooms share: the API's errors, times, the filter parser, the generic
                 SQLite store, resource names and pages, long-running operations, v1beta1
                 answered by a v1 implementation
and, at the top: server.py (every service on one port, the admin service on another, Cloud
Storage on a third), auth.py
(the bearer token every call must carry: only the control plane holds it), config.py (the
settings), client.py (GAPIC clients pointed at the emulator), __main__.py
(`python -m localvertex`).
"""
