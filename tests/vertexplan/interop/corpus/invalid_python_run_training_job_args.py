from google.cloud import aiplatform

job = aiplatform.CustomJob(
    display_name="sdk-mixed-up-run",
    worker_pool_specs=[{
        "machine_spec": {"machine_type": "n1-standard-8"},
        "replica_count": 1,
        "container_spec": {"image_uri": "us-docker.pkg.dev/my-project/training/x:latest"},
    }],
)
# replica_count is an argument of CustomTrainingJob.run, not of CustomJob.run
job.run(replica_count=4, sync=True)
